package retry_test

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towertest"
)

// withdraw fails t unless b.Withdraw() reports want.
func withdraw(t *testing.T, b *retry.TPSBudget, want bool, what string) {
	t.Helper()
	if got := b.Withdraw(); got != want {
		t.Errorf("%s: Withdraw() = %t, want %t (%v)", what, got, want, b)
	}
}

// tower: tps_empty.
func TestTPSBudgetEmpty(t *testing.T) {
	b := retry.NewTPSBudget(time.Second, 0, 1.0)
	withdraw(t, b, false, "nothing deposited, no reserve")
}

// tower: tps_leaky. A deposit expires after the ttl.
func TestTPSBudgetLeaky(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := retry.NewTPSBudget(time.Second, 0, 1.0)
		b.Deposit()
		time.Sleep(3 * time.Second)
		withdraw(t, b, false, "at 3s, the deposit made at 0s")
	})
}

// tower: tps_slots, at tower's exact times.
func TestTPSBudgetSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := retry.NewTPSBudget(time.Second, 0, 0.5) // 2 deposits per retry
		b.Deposit()
		b.Deposit()
		time.Sleep(901 * time.Millisecond)
		// At 901ms, the deposits made at 0ms still count.
		withdraw(t, b, true, "at 901ms")
		withdraw(t, b, false, "at 901ms, again")

		time.Sleep(2001 * time.Millisecond) // a blank slate, at 2902ms
		b.Deposit()
		time.Sleep(301 * time.Millisecond) // 3203ms
		b.Deposit()
		time.Sleep(801 * time.Millisecond) // 4004ms
		b.Deposit()
		// The first of the three has expired; the second and third pay for
		// one retry, and no more.
		withdraw(t, b, true, "at 4004ms")
		withdraw(t, b, false, "at 4004ms, again")
	})
}

// tower: tps_reserve. 5 per second over a ttl of 1s: 5 withdrawals with
// nothing deposited.
func TestTPSBudgetReserve(t *testing.T) {
	b := retry.NewTPSBudget(time.Second, 5, 1.0)
	for i := range 5 {
		withdraw(t, b, true, fmt.Sprintf("withdrawal %d", i+1))
	}
	withdraw(t, b, false, "withdrawal 6")
}

// The quirk of tower's expiry that this port keeps: the slot that becomes
// current is not cleared, so the deposits it held count until the next
// expiry overwrites it. With a ttl of 1s, two deposits at 0ms are committed
// to slot 0 at 901ms, the nine others are cleared, and slot 0 becomes
// current again: the balance is two deposits, one retry. A withdrawal then
// leaves 0; at 1002ms the expiry commits the current amount, minus a
// retry, over slot 0's two deposits, and the balance falls to minus a
// retry until the withdrawal expires.
func TestTPSBudgetCurrentSlotNotCleared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := retry.NewTPSBudget(time.Second, 0, 0.5)
		b.Deposit()
		b.Deposit()
		time.Sleep(901 * time.Millisecond)
		withdraw(t, b, true, "at 901ms")
		if got := b.Balance(); got != 0 {
			t.Errorf("balance at 901ms: got %d, want 0", got)
		}
		time.Sleep(101 * time.Millisecond)
		b.Deposit() // 1002ms: expires, then deposits half a retry
		if got := b.Balance(); got != -500_000 {
			t.Errorf("balance at 1002ms after one deposit: got %d, want -500000", got)
		}
		time.Sleep(1000 * time.Millisecond)
		b.Deposit() // 2002ms: the withdrawal has expired
		if got := b.Balance(); got != 1_000_000 {
			t.Errorf("balance at 2002ms: got %d, want 1000000", got)
		}
	})
}

// A deposit at exactly the end of a slot's time (100ms of a 1s ttl)
// starts the next slot, so it expires a slot later than those before it:
// at 1050ms the deposits of 0ms are gone, and the one of 100ms still
// counts, with one more deposit, for a retry.
func TestTPSBudgetSlotEndsExactly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := retry.NewTPSBudget(time.Second, 0, 0.5)
		b.Deposit()
		b.Deposit()
		time.Sleep(100 * time.Millisecond)
		b.Deposit()
		time.Sleep(950 * time.Millisecond)
		b.Deposit()
		withdraw(t, b, true, "at 1050ms, with the deposits of 100ms and 1050ms")
		withdraw(t, b, false, "at 1050ms, again")
	})
}

// A deposit adds retryPercent in millionths and a retry costs a million:
// tower's intended ratio, where tower's own truncates 1/retryPercent.
func TestTPSBudgetAmounts(t *testing.T) {
	tests := []struct {
		percent           float64
		deposit, withdraw int64
	}{
		{0, 0, 1_000_000},
		{0.1, 100_000, 1_000_000},
		{0.2, 200_000, 1_000_000},
		{0.6, 600_000, 1_000_000}, // tower: 1 and 1, 100% (tower issue #857)
		{1.0 / 3, 333_333, 1_000_000},
		{2.0 / 3, 666_667, 1_000_000}, // rounded, not truncated
		{1, 1_000_000, 1_000_000},
		{3, 3_000_000, 1_000_000},
		{1000, 1_000_000_000, 1_000_000},
		{4e-7, 0, 1_000_000}, // below half a millionth: nothing
		{6e-7, 1, 1_000_000},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.percent), func(t *testing.T) {
			dep, wd := retry.TPSAmounts(tt.percent)
			if dep != tt.deposit || wd != tt.withdraw {
				t.Errorf("got deposit %d, withdraw %d; want %d, %d", dep, wd, tt.deposit, tt.withdraw)
			}
		})
	}
}

// The budget allows the share of retries its retryPercent says, to the
// retry, where tower's allows 100 for each of these up to 1: 100 deposits
// and then withdrawals until one fails, without a reserve.
func TestTPSBudgetAllowsItsPercent(t *testing.T) {
	for _, tt := range []struct {
		percent float64
		want    int
	}{
		{0.6, 60}, {0.2, 20}, {0.75, 75}, {1.0 / 3, 33}, {2.0 / 3, 66}, {0.999, 99}, {1, 100}, {2.5, 250}, {0, 0},
	} {
		t.Run(fmt.Sprint(tt.percent), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := retry.NewTPSBudget(10*time.Second, 0, tt.percent)
				for range 100 {
					b.Deposit()
				}
				got := 0
				for b.Withdraw() {
					got++
				}
				if got != tt.want {
					t.Errorf("100 deposits at %v allowed %d retries, want %d", tt.percent, got, tt.want)
				}
			})
		})
	}
}

func TestTPSBudgetReserveAmount(t *testing.T) {
	tests := []struct {
		ttl       time.Duration
		minPerSec int
		percent   float64
		want      int64
	}{
		{10 * time.Second, 10, 0.2, 10 * 10 * 1_000_000}, // tower's default: 100 retries
		{1500 * time.Millisecond, 4, 1, 4 * 1_000_000},   // whole seconds of ttl
		{time.Minute, math.MaxInt32 - 1, 0, (math.MaxInt32 - 1) * 60 * 1_000_000},
	}
	for _, tt := range tests {
		if got := retry.NewTPSBudget(tt.ttl, tt.minPerSec, tt.percent).Reserve(); got != tt.want {
			t.Errorf("NewTPSBudget(%v, %d, %v): got reserve %d, want %d", tt.ttl, tt.minPerSec, tt.percent, got, tt.want)
		}
	}
}

// A budget idle for a long time expires in one step, and starts afresh.
func TestTPSBudgetLongIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := retry.NewTPSBudget(time.Second, 0, 1)
		b.Deposit()
		time.Sleep(1000 * time.Hour)
		withdraw(t, b, false, "after 1000h")
		b.Deposit()
		withdraw(t, b, true, "after a new deposit")
	})
}

// Concurrent withdrawals never overdraw: a reserve of 100 pays for exactly
// 100 of 300.
func TestTPSBudgetConcurrentWithdrawals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := retry.NewTPSBudget(time.Second, 100, 1)
		var ok atomic.Int64
		var wg sync.WaitGroup
		for range 300 {
			wg.Go(func() {
				if b.Withdraw() {
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		if got := ok.Load(); got != 100 {
			t.Errorf("got %d withdrawals, want 100", got)
		}
	})
}

func TestTPSBudgetString(t *testing.T) {
	b := retry.NewTPSBudget(10*time.Second, 10, 0.2)
	want := "TPSBudget{deposit: 200000, withdraw: 1000000, balance: 100000000}"
	if got := b.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestTPSBudgetBadInputPanics(t *testing.T) {
	for _, tt := range []struct {
		name      string
		ttl       time.Duration
		minPerSec int
		percent   float64
		want      string
	}{
		{"TTLShort", 999 * time.Millisecond, 0, 0, "retry.NewTPSBudget: ttl must be between 1s and 1m0s, got 999ms"},
		{"TTLLong", time.Minute + 1, 0, 0, "retry.NewTPSBudget: ttl must be between 1s and 1m0s, got 1m0.000000001s"},
		{"PercentNegative", time.Second, 0, -0.1, "retry.NewTPSBudget: retryPercent must be between 0 and 1000, got -0.1"},
		{"PercentOver1000", time.Second, 0, 1000.5, "retry.NewTPSBudget: retryPercent must be between 0 and 1000, got 1000.5"},
		{"PercentNaN", time.Second, 0, math.NaN(), "retry.NewTPSBudget: retryPercent must be between 0 and 1000, got NaN"},
		{"MinPerSecNegative", time.Second, -1, 0, "retry.NewTPSBudget: minPerSec must be between 0 and 2147483646, got -1"},
		{"MinPerSecTooBig", time.Second, math.MaxInt32, 0, "retry.NewTPSBudget: minPerSec must be between 0 and 2147483646, got 2147483647"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			towertest.Panics(t, tt.want, func() { retry.NewTPSBudget(tt.ttl, tt.minPerSec, tt.percent) })
		})
	}
}

// DrawOnly withdraws from the budget it wraps and deposits nothing.
func TestDrawOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := retry.NewTPSBudget(10*time.Second, 0, 1)
		d := retry.DrawOnly(b)
		d.Deposit()
		withdraw(t, b, false, "after a deposit through DrawOnly")
		b.Deposit()
		if !d.Withdraw() {
			t.Fatal("DrawOnly's Withdraw refused what the budget holds")
		}
		withdraw(t, b, false, "after DrawOnly took the only retry")
	})
	towertest.Panics(t, "retry.DrawOnly: nil Budget", func() { retry.DrawOnly(nil) })
	towertest.Panics(t, "retry.DrawOnly: nil Budget", func() { retry.DrawOnly((*retry.TPSBudget)(nil)) })
}

// The budget's amounts add up without wrapping around: a sum beyond an
// int64 stays at its largest or smallest value, and any other sum, with
// zero too, is exact.
func TestSatAdd(t *testing.T) {
	for _, c := range []struct{ a, b, want int64 }{
		{1, 2, 3},
		{5, 0, 5},
		{-5, 0, -5},
		{0, 0, 0},
		{5, -7, -2},
		{-5, 7, 2},
		{math.MaxInt64, 0, math.MaxInt64},
		{math.MaxInt64, 1, math.MaxInt64},
		{1, math.MaxInt64, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64, math.MaxInt64},
		{math.MaxInt64, -1, math.MaxInt64 - 1},
		{math.MinInt64, 0, math.MinInt64},
		{math.MinInt64, -1, math.MinInt64},
		{-1, math.MinInt64, math.MinInt64},
		{math.MinInt64, math.MinInt64, math.MinInt64},
		{math.MinInt64, 1, math.MinInt64 + 1},
		{math.MaxInt64, math.MinInt64, -1},
	} {
		if got := retry.SatAdd(c.a, c.b); got != c.want {
			t.Errorf("satAdd(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
