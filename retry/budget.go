package retry

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/towergo/tower/internal/isnil"
)

// A Budget limits retries across requests: tower's Budget. A policy
// deposits as requests are made and withdraws for each retry, and does not
// retry when a withdrawal fails. A maximum number of attempts per request
// multiplies the load by that number when everything fails, and layers of
// retries multiply it again; a budget caps the extra load at a share of the
// traffic. One Budget may serve several policies, and package hedge's
// hedges too, to cap their extra load together.
//
// One Budget can bound all the extra load of a client, its retries, its
// hedges (package hedge) and its breakers' probes (package breaker), so
// that what the backends get stays within (1 + the budget's share) of
// what the callers send even when every backend fails. For that, one
// layer deposits, once per request: the outermost that sees each request
// once, usually the Retry's policy. The others draw on it and deposit
// nothing: give them [DrawOnly](b). (A breaker never deposits.)
//
// Implementations must be safe for concurrent use.
type Budget interface {
	// Deposit records a request that can earn retries.
	Deposit()
	// Withdraw takes what one retry costs, and reports whether there was
	// enough.
	Withdraw() bool
}

// DrawOnly returns a Budget that withdraws from b and deposits nothing:
// for the layers that share a budget with one that deposits for each
// request, such as a Hedge under a Retry, which would otherwise deposit
// again for each attempt. It panics if b is nil, or a typed nil.
func DrawOnly(b Budget) Budget {
	if isnil.Is(b) {
		panic("retry.DrawOnly: nil Budget")
	}
	return drawOnly{b}
}

type drawOnly struct{ b Budget }

func (drawOnly) Deposit()         {}
func (d drawOnly) Withdraw() bool { return d.b.Withdraw() }

// TPSBudget is tower's TpsBudget, itself Finagle's RetryBudget: it allows
// retries for a share of the requests deposited over the last ttl, plus a
// reserve of minPerSec retries per second for callers that send little.
//
// The arithmetic is tower's as it was meant to be, not as it is: tower
// computes a retry's cost in whole deposits, trunc(1/retryPercent), so a
// retryPercent of 0.6 costs 1 deposit and allows 100% retries, not 60%,
// and any percent between 0.5 and 1 allows 100% (tower issue #857). Here a
// deposit adds retryPercent in millionths, rounded, and a retry costs a
// million: a retryPercent of 0.6 allows exactly 60 retries per 100
// deposits, 0.2 exactly 20, 1/3 allows 33 per 100 (333,333 millionths
// each), and a percent is honoured to the millionth. The reserve is
// minPerSec·(ttl in whole seconds) retries, and never runs out: a
// withdrawal succeeds while the sum of the recent deposits and withdrawals
// and the reserve covers its cost.
//
// Deposits and withdrawals are kept in 10 slots of ttl/10 each, plus one
// for the current slot, and expire lazily: at each deposit or withdrawal,
// if a slot's time has passed since the last expiry, the current amount is
// committed to the current slot, the following slots are cleared for each
// further ttl/10 that has passed, and the slot after the last one cleared
// becomes current, without being cleared itself. Its old amount keeps
// counting until the next expiry overwrites it: a quirk of tower's that
// this port keeps.
//
// Unlike tower's, which sums the slots outside its lock, a withdrawal here
// checks the balance and takes its cost in one step, so concurrent
// withdrawals cannot overdraw.
//
// A TPSBudget is safe for concurrent use. Its zero value is not usable;
// build one with [NewTPSBudget].
type TPSBudget struct {
	mu       sync.Mutex
	index    int       // the current slot
	expired  time.Time // when the slots last expired
	writer   int64     // the current slot's amount, committed at expiry
	slots    [tpsSlots]int64
	window   time.Duration // the time each slot stands for, ttl/10
	reserve  int64
	deposit  int64 // what a deposit adds
	withdraw int64 // what a withdrawal takes
}

const tpsSlots = 10

// NewTPSBudget returns a TPSBudget whose deposits count for ttl, which
// allows minPerSec retries per second whatever the deposits, and
// retryPercent retries per deposit on top: retryPercent is a ratio, 0.2
// for one retry every five deposits, 2 for two per deposit. tower's default
// is NewTPSBudget(10*time.Second, 10, 0.2).
//
// It panics, as tower's asserts do, unless 1s <= ttl <= 60s,
// 0 <= retryPercent <= 1000, and 0 <= minPerSec < 1<<31-1.
func NewTPSBudget(ttl time.Duration, minPerSec int, retryPercent float64) *TPSBudget {
	if ttl < time.Second || ttl > time.Minute {
		panic(fmt.Sprintf("retry.NewTPSBudget: ttl must be between 1s and 1m0s, got %v", ttl))
	}
	if !(retryPercent >= 0 && retryPercent <= 1000) {
		panic(fmt.Sprintf("retry.NewTPSBudget: retryPercent must be between 0 and 1000, got %v", retryPercent))
	}
	if minPerSec < 0 || minPerSec >= math.MaxInt32 {
		panic(fmt.Sprintf("retry.NewTPSBudget: minPerSec must be between 0 and %d, got %d", math.MaxInt32-1, minPerSec))
	}
	dep, wd := tpsAmounts(retryPercent)
	return &TPSBudget{
		expired:  time.Now(),
		window:   ttl / tpsSlots,
		reserve:  int64(minPerSec) * int64(ttl/time.Second) * wd,
		deposit:  dep,
		withdraw: wd,
	}
}

// tpsUnit is what a retry costs: a deposit adds retryPercent of it.
const tpsUnit = 1_000_000

// tpsAmounts returns what a deposit adds and a withdrawal takes for
// retryPercent p: p in millionths, rounded to the nearest, and a million.
// The largest values, 1000 retries per deposit and a reserve of
// (1<<31-2)·60 retries, stay far below math.MaxInt64.
func tpsAmounts(p float64) (deposit, withdraw int64) {
	return int64(math.Round(p * tpsUnit)), tpsUnit
}

// Deposit adds a deposit to the current slot.
func (b *TPSBudget) Deposit() {
	b.mu.Lock()
	b.expire()
	b.writer = satAdd(b.writer, b.deposit)
	b.mu.Unlock()
}

// Withdraw takes a retry's cost if the recent deposits and withdrawals and
// the reserve cover it, and reports whether they did.
func (b *TPSBudget) Withdraw() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expire()
	if b.sum() < b.withdraw {
		return false
	}
	b.writer = satAdd(b.writer, -b.withdraw)
	return true
}

// String describes the budget as tower's Debug does, with the balance as of
// the last deposit or withdrawal.
func (b *TPSBudget) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return fmt.Sprintf("TPSBudget{deposit: %d, withdraw: %d, balance: %d}", b.deposit, b.withdraw, b.sum())
}

// expire is tower's TpsBudget::expire. b.mu must be held.
func (b *TPSBudget) expire() {
	now := time.Now()
	diff := max(now.Sub(b.expired), 0)
	if diff < b.window {
		return
	}
	b.slots[b.index] = b.writer
	b.writer = 0
	// tower clears one slot for each window by which diff exceeds one
	// window: while diff > window { clear; diff -= window }. That is
	// (diff-1)/window slots, counted here rather than looped over, so a
	// budget idle for hours expires in constant time.
	n := int64((diff - 1) / b.window)
	for i := range min(n, tpsSlots) {
		b.slots[(int64(b.index)+1+i)%tpsSlots] = 0
	}
	b.index = int((int64(b.index) + 1 + n) % tpsSlots)
	b.expired = now
}

// sum is tower's TpsBudget::sum. b.mu must be held.
func (b *TPSBudget) sum() int64 {
	var windowed int64
	for _, v := range b.slots {
		windowed = satAdd(windowed, v)
	}
	return satAdd(satAdd(b.writer, windowed), b.reserve)
}

// satAdd returns a+b, or the largest or smallest int64 if the sum is
// beyond them.
func satAdd(a, b int64) int64 {
	s := a + b
	if (s > a) == (b > 0) {
		return s // the sum moved the way b points: it did not wrap around
	}
	if b > 0 {
		return math.MaxInt64
	}
	return math.MinInt64
}
