package retry_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towertest"
)

// The extremes of a Duration and of an int, and 0, for every parameter of
// the backoffs' constructors: a clear panic, or a backoff that works.
func TestBackoffParameterBounds(t *testing.T) {
	const (
		lo = time.Duration(math.MinInt64)
		hi = time.Duration(math.MaxInt64)
	)
	for _, tt := range []struct {
		name     string
		min, max time.Duration
		jitter   float64
		want     string // the panic, after the constructor's name; "" for a backoff that works
	}{
		{"MinMinInt64", lo, time.Second, 0, "min must not be negative, got -2562047h47m16.854775808s"},
		{"MinMaxInt64", hi, time.Second, 0, "max must not be less than min, got min 2562047h47m16.854775807s and max 1s"},
		{"MinZero", 0, time.Second, 0, ""},
		{"MaxMinInt64", 0, lo, 0, "max must not be less than min, got min 0s and max -2562047h47m16.854775808s"},
		{"MaxZero", 0, 0, 0, "max must not be zero"},
		{"MaxMaxInt64", 0, hi, 0, ""},
		{"MinAndMaxMaxInt64", hi, hi, 100, ""},
		{"FullRange", 1, hi, 100, ""},
		{"JitterMaxInt64", 0, time.Second, math.MaxInt64, "jitter must be between 0 and 100, got 9.223372036854776e+18"},
		{"JitterMinInt64", 0, time.Second, math.MinInt64, "jitter must be between 0 and 100, got -9.223372036854776e+18"},
		{"JitterZero", 0, time.Second, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			newExp := func() *retry.ExponentialBackoff { return retry.NewExponentialBackoff(tt.min, tt.max, tt.jitter) }
			newFull := func() *retry.FullJitterBackoff { return retry.NewFullJitterBackoff(tt.min, tt.max) }
			if tt.want != "" {
				towertest.Panics(t, "retry.NewExponentialBackoff: "+tt.want, func() { newExp() })
				if !strings.HasPrefix(tt.want, "jitter") {
					towertest.Panics(t, "retry.NewFullJitterBackoff: "+tt.want, func() { newFull() })
				}
				return
			}
			exp, full := newExp(), newFull()
			for _, r := range []float64{0, 0.5, math.Nextafter(1, 0)} {
				exp.SetRand(func() float64 { return r })
				full.SetRand(func() float64 { return r })
				delaysWithin(t, exp, tt.min, tt.max)
				delaysWithin(t, full, 0, tt.max)
			}
		})
	}
}

// delaysWithin fails t unless b's delay after every attempt, from
// math.MinInt to math.MaxInt, lies within [lo, hi].
func delaysWithin(t *testing.T, b retry.Backoff, lo, hi time.Duration) {
	t.Helper()
	for _, n := range []int{math.MinInt, -1, 0, 1, 2, 62, 63, 64, math.MaxInt} {
		if d := b.Delay(n); d < lo || d > hi {
			t.Errorf("%T.Delay(%d): got %v, want it within [%v, %v]", b, n, d, lo, hi)
		}
	}
}

// An attempt below 1 counts as 1, down to math.MinInt, whose attempt-1
// wrapped around to math.MaxInt and gave the maximum.
func TestBackoffAttemptMinInt(t *testing.T) {
	exp := retry.NewExponentialBackoff(time.Millisecond, time.Hour, 0)
	full := retry.NewFullJitterBackoff(time.Millisecond, time.Hour)
	full.SetRand(func() float64 { return 0.5 })
	for _, tt := range []struct {
		b    retry.Backoff
		want time.Duration
	}{{exp, time.Millisecond}, {full, time.Millisecond / 2}} {
		for _, n := range []int{math.MinInt, math.MinInt + 1, -1, 0, 1} {
			if got := tt.b.Delay(n); got != tt.want {
				t.Errorf("%T.Delay(%d): got %v, want %v", tt.b, n, got, tt.want)
			}
		}
	}
}

// The extremes for NewTPSBudget's and WithMaxAttempts's parameters: a
// clear panic, or a budget or policy that works.
func TestPolicyParameterBounds(t *testing.T) {
	ttlMsg := func(d time.Duration) string {
		return fmt.Sprintf("retry.NewTPSBudget: ttl must be between 1s and 1m0s, got %v", d)
	}
	perSecMsg := func(n int) string {
		return fmt.Sprintf("retry.NewTPSBudget: minPerSec must be between 0 and 2147483646, got %d", n)
	}
	pctMsg := func(p float64) string {
		return fmt.Sprintf("retry.NewTPSBudget: retryPercent must be between 0 and 1000, got %v", p)
	}
	attemptsMsg := func(n int) string {
		return fmt.Sprintf("retry.WithMaxAttempts: n must be at least 1, got %d", n)
	}
	for _, tt := range []struct {
		name string
		f    func()
		want string // the panic; "" for none
	}{
		{"TPSBudget/ttl/MaxInt64", func() { retry.NewTPSBudget(math.MaxInt64, 0, 0) }, ttlMsg(math.MaxInt64)},
		{"TPSBudget/ttl/MinInt64", func() { retry.NewTPSBudget(math.MinInt64, 0, 0) }, ttlMsg(math.MinInt64)},
		{"TPSBudget/ttl/Zero", func() { retry.NewTPSBudget(0, 0, 0) }, ttlMsg(0)},
		{"TPSBudget/minPerSec/MaxInt64", func() { retry.NewTPSBudget(time.Second, math.MaxInt64, 0) }, perSecMsg(math.MaxInt64)},
		{"TPSBudget/minPerSec/MinInt64", func() { retry.NewTPSBudget(time.Second, math.MinInt64, 0) }, perSecMsg(math.MinInt64)},
		{"TPSBudget/minPerSec/Zero", func() { retry.NewTPSBudget(time.Second, 0, 0) }, ""},
		{"TPSBudget/retryPercent/MaxInt64", func() { retry.NewTPSBudget(time.Second, 0, math.MaxInt64) }, pctMsg(math.MaxInt64)},
		{"TPSBudget/retryPercent/MinInt64", func() { retry.NewTPSBudget(time.Second, 0, math.MinInt64) }, pctMsg(math.MinInt64)},
		{"TPSBudget/retryPercent/Zero", func() { retry.NewTPSBudget(time.Second, 0, 0) }, ""},
		{"WithMaxAttempts/MaxInt64", func() { retry.WithMaxAttempts(math.MaxInt64) }, ""},
		{"WithMaxAttempts/MinInt64", func() { retry.WithMaxAttempts(math.MinInt64) }, attemptsMsg(math.MinInt64)},
		{"WithMaxAttempts/Zero", func() { retry.WithMaxAttempts(0) }, attemptsMsg(0)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want != "" {
				towertest.Panics(t, tt.want, tt.f)
				return
			}
			tt.f()
		})
	}
}

// A TPSBudget at the largest of everything it takes neither overflows nor
// wraps around: its reserve saturates, deposits add up without wrapping,
// and after an idle spell of two centuries, its slots expire at once and
// the reserve still pays for a retry.
func TestTPSBudgetAtTheExtremes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, tt := range []struct {
			name string
			b    *retry.TPSBudget
		}{
			{"Largest", retry.NewTPSBudget(time.Minute, math.MaxInt32-1, 1000)},
			{"NoReserve", retry.NewTPSBudget(time.Minute, 0, 1000)},
		} {
			for range 1000 {
				tt.b.Deposit()
			}
			if !tt.b.Withdraw() {
				t.Errorf("%s: Withdraw after 1000 deposits failed", tt.name)
			}
			if bal := tt.b.Balance(); bal < 0 {
				t.Errorf("%s: got a negative balance %d", tt.name, bal)
			}
			time.Sleep(200 * 365 * 24 * time.Hour)
			if got, want := tt.b.Withdraw(), tt.b.Reserve() > 0; got != want {
				t.Errorf("%s: Withdraw after two idle centuries: got %t, want %t (the reserve's)", tt.name, got, want)
			}
		}
	})
}
