package retry

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
)

// A Budget limits retries across requests: tower's Budget. A policy
// deposits as requests are made, withdraws for each retry, and does not
// retry when a withdrawal fails; so when everything fails, the extra load
// is a share of the traffic, not a multiple of it.
//
// One Budget can bound all the extra load of a client: its retries, its
// hedges and its breakers' probes. Only one layer deposits, once per
// request: the outermost that sees each request once, usually the Retry's
// policy. Give the others [DrawOnly](b).
//
// Implementations must be safe for concurrent use.
type Budget interface {
	// Deposit records a request that can earn retries.
	Deposit()
	// Withdraw takes what one retry costs, and reports whether there was
	// enough.
	Withdraw() bool
}

// DrawOnly returns a Budget that withdraws from b and deposits nothing (see
// [Budget]). It panics if b is nil, or a typed nil.
func DrawOnly(b Budget) Budget {
	option.PanicIf(isnil.Is(b), "retry.DrawOnly: nil Budget")
	return drawOnly{b}
}

type drawOnly struct{ b Budget }

func (drawOnly) Deposit()         {}
func (d drawOnly) Withdraw() bool { return d.b.Withdraw() }

// TPSBudget is tower's TpsBudget (Finagle's RetryBudget): it allows
// retries for a share of the requests deposited over the last ttl, plus a
// reserve of minPerSec retries per second for callers that send little.
// A deposit adds retryPercent in millionths, rounded, and a retry costs a
// million, so 0.6 allows exactly 60 retries per 100 deposits (tower rounds
// a retry's cost to whole deposits). Concurrent withdrawals cannot
// overdraw.
//
// A TPSBudget is safe for concurrent use. Its zero value is not usable;
// build one with [NewTPSBudget].
type TPSBudget struct {
	mu      sync.Mutex
	index   int             // the current slot
	expired time.Time       // when the slots last expired
	writer  int64           // the current slot's amount, committed at expiry
	slots   [tpsSlots]int64 // the committed amounts of the last ttl
	window  time.Duration   // the time each slot stands for, ttl/10
	reserve int64
	deposit int64 // what a deposit adds; a retry costs tpsUnit
}

const tpsSlots = 10

// NewTPSBudget returns a TPSBudget over ttl, with a reserve of minPerSec
// retries per second and retryPercent retries per deposit, a ratio: 0.2
// for one every five deposits. tower's default is
// NewTPSBudget(10*time.Second, 10, 0.2). It panics unless 1s <= ttl <= 60s,
// 0 <= retryPercent <= 1000, and 0 <= minPerSec < 1<<31-1.
func NewTPSBudget(ttl time.Duration, minPerSec int, retryPercent float64) *TPSBudget {
	option.PanicIf(ttl < time.Second || ttl > time.Minute, "retry.NewTPSBudget: ttl must be between 1s and 1m0s, got %v", ttl)
	option.PanicIf(!(retryPercent >= 0 && retryPercent <= 1000), "retry.NewTPSBudget: retryPercent must be between 0 and 1000, got %v", retryPercent)
	option.PanicIf(minPerSec < 0 || minPerSec >= math.MaxInt32, "retry.NewTPSBudget: minPerSec must be between 0 and %d, got %d", math.MaxInt32-1, minPerSec)
	return &TPSBudget{
		expired: time.Now(),
		window:  ttl / tpsSlots,
		reserve: int64(minPerSec) * int64(ttl/time.Second) * tpsUnit,
		deposit: int64(math.Round(retryPercent * tpsUnit)),
	}
}

// tpsUnit is what a retry costs: a deposit adds retryPercent of it.
const tpsUnit = 1_000_000

// Deposit adds a deposit to the current slot.
func (b *TPSBudget) Deposit() {
	b.mu.Lock()
	b.expire()
	b.writer = satAdd(b.writer, b.deposit)
	b.mu.Unlock()
}

// Withdraw takes a retry's cost if the balance covers it.
func (b *TPSBudget) Withdraw() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expire()
	if b.sum() < tpsUnit {
		return false
	}
	b.writer = satAdd(b.writer, -tpsUnit)
	return true
}

// String describes the budget as tower's Debug does.
func (b *TPSBudget) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return fmt.Sprintf("TPSBudget{deposit: %d, withdraw: %d, balance: %d}", b.deposit, tpsUnit, b.sum())
}

// expire is tower's TpsBudget::expire, in constant time however long b was
// idle. As in tower, the next slot's old amount counts until the next
// expiry overwrites it. b.mu must be held.
func (b *TPSBudget) expire() {
	now := time.Now()
	diff := max(now.Sub(b.expired), 0)
	if diff < b.window {
		return
	}
	b.slots[b.index] = b.writer
	b.writer = 0
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

// satAdd returns a+b, saturated to the range of int64.
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
