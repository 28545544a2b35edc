package limit_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/sema"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towertest"
)

// Every count and duration of every constructor at the ends of its range,
// and at 0: refused with a clear panic, or, for a Rate's per of
// math.MaxInt64, a window that never ends.
func TestParameterBounds(t *testing.T) {
	maxMsg := func(fn string, max int) string {
		return fmt.Sprintf("%s: max must be between 1 and %d, got %d", fn, sema.MaxUnits, max)
	}
	numMsg := func(fn string, num int) string {
		return fmt.Sprintf("%s: num must be between 1 and %d, got %d", fn, limit.MaxRate, num)
	}
	perMsg := func(fn string, per time.Duration) string {
		return fmt.Sprintf("%s: per must be positive, got %v", fn, per)
	}
	type ctor struct {
		name string
		f    func(n int64)
		msg  func(n int64) string // "" for n that must work
	}
	ctors := []ctor{
		{"NewSemaphore", func(n int64) { limit.NewSemaphore(int(n)) },
			func(n int64) string { return maxMsg("limit.NewSemaphore", int(n)) }},
		{"NewConcurrency/max", func(n int64) { limit.NewConcurrency(echo, int(n)) },
			func(n int64) string { return maxMsg("limit.NewConcurrency", int(n)) }},
		{"NewConcurrencyLayer/max", func(n int64) { limit.NewConcurrencyLayer[string, string](int(n)) },
			func(n int64) string { return maxMsg("limit.NewConcurrencyLayer", int(n)) }},
		{"NewRate/num", func(n int64) { limit.NewRate(echo, int(n), time.Second) },
			func(n int64) string { return numMsg("limit.NewRate", int(n)) }},
		{"NewRateLayer/num", func(n int64) { limit.NewRateLayer[string, string](int(n), time.Second) },
			func(n int64) string { return numMsg("limit.NewRateLayer", int(n)) }},
		{"NewRate/per", func(n int64) { limit.NewRate(echo, 1, time.Duration(n)) },
			func(n int64) string { return perMsg("limit.NewRate", time.Duration(n)) }},
		{"NewRateLayer/per", func(n int64) { limit.NewRateLayer[string, string](1, time.Duration(n)) },
			func(n int64) string { return perMsg("limit.NewRateLayer", time.Duration(n)) }},
	}
	for _, c := range ctors {
		for _, v := range []struct {
			name string
			n    int64
		}{{"MaxInt64", math.MaxInt64}, {"MinInt64", math.MinInt64}, {"Zero", 0}} {
			t.Run(c.name+"/"+v.name, func(t *testing.T) {
				if v.n == math.MaxInt64 && (c.name == "NewRate/per" || c.name == "NewRateLayer/per") {
					return // TestRateHugePeriod
				}
				towertest.Panics(t, c.msg(v.n), func() { c.f(v.n) })
			})
		}
	}
}

// A Rate whose period is math.MaxInt64 lets num requests through, then
// never another: its window never ends. A caller that finds no place waits
// (until its ctx ends), and one that asks with a done ctx is refused. A
// place released unused goes back to the window. Run in a synctest bubble
// and, since the monotonic clock's readings are negative in one, outside
// one too: there the window's end wrapped around into the past, every
// Ready opened a new window, and the Rate let everyone through.
func TestRateHugePeriod(t *testing.T) {
	for _, tt := range []struct {
		name string
		svc  func() tower.Service[string, string]
	}{
		{"NewRate", func() tower.Service[string, string] { return limit.NewRate(echo, 1, math.MaxInt64) }},
		{"NewRateLayer", func() tower.Service[string, string] {
			return limit.NewRateLayer[string, string](1, math.MaxInt64).Wrap(echo)
		}},
	} {
		t.Run(tt.name+"/RealClock", func(t *testing.T) { admitsOne(t, tt.svc()) })
		t.Run(tt.name+"/Bubble", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				svc := tt.svc()
				admitsOne(t, svc)
				start := time.Now()
				ctx, cancel := context.WithTimeout(t.Context(), 10000*time.Hour)
				defer cancel()
				p, err := svc.Ready(ctx) // the one place is taken: it waits
				p.Release()
				if at := time.Since(start); err != context.DeadlineExceeded || at != 10000*time.Hour {
					t.Errorf("a second Ready: got %v at %v, want %v at 10000h", err, at, context.DeadlineExceeded)
				}
			})
		})
	}
}

// admitsOne fails t unless svc, a Rate of 1 per math.MaxInt64, grants its
// one place, refuses a done ctx, makes a caller with a live ctx wait until
// that ctx ends, gets the place back when it is released unused, and
// takes it again.
func admitsOne(t *testing.T, svc tower.Service[string, string]) {
	t.Helper()
	p, ok, err := tower.ReadyNow(svc)
	if !ok || err != nil {
		t.Fatalf("first ReadyNow: got %t, %v; want a place", ok, err)
	}
	if q, ok, err := tower.ReadyNow(svc); ok || err != nil {
		q.Release()
		t.Fatalf("second ReadyNow: got %t, %v; want none, no error", ok, err)
	}
	// A waiter gets nothing until its ctx ends: cancelled, it returns
	// context.Canceled. A Rate that let it through would grant it a place
	// even after the cancellation, as free capacity is granted to a done
	// ctx.
	ctx, cancel := context.WithCancel(t.Context())
	waiter := towertest.Go(func() (permit, error) { return svc.Ready(ctx) })
	cancel()
	if q, err := waiter.Wait(); err != context.Canceled {
		q.Release()
		t.Fatalf("a waiting Ready: got %v, want %v", err, context.Canceled)
	}
	p.Release()
	p, ok, err = tower.ReadyNow(svc)
	if !ok || err != nil {
		t.Fatalf("ReadyNow after the place was released: got %t, %v; want the place", ok, err)
	}
	if res, err := p.Call(t.Context(), "hello"); res != "hello" || err != nil {
		t.Errorf("Call: got %q, %v; want %q, nil", res, err, "hello")
	}
}

// Typed nils are refused where nil is: they would fail later, at the first
// request, with a nil dereference.
func TestTypedNilPanics(t *testing.T) {
	sem := limit.NewSemaphore(1)
	for _, tt := range []struct {
		name string
		f    func()
		want string
	}{
		{"ConcurrencyTypedNilInner", func() { limit.NewConcurrency[string, string]((*towertest.Mock[string, string])(nil), 1) }, "limit.NewConcurrency: inner is nil"},
		{"ConcurrencyNilServiceFunc", func() { limit.NewConcurrency[string, string](tower.ServiceFunc[string, string](nil), 1) }, "limit.NewConcurrency: inner is nil"},
		{"ConcurrencyWithTypedNilInner", func() { limit.NewConcurrencyWith[string, string]((*towertest.Mock[string, string])(nil), sem) }, "limit.NewConcurrencyWith: inner is nil"},
		{"ConcurrencyLayerTypedNilInner", func() {
			limit.NewConcurrencyLayer[string, string](1).Wrap((*towertest.Mock[string, string])(nil))
		}, "limit.NewConcurrency: inner is nil"},
		{"SharedConcurrencyLayerTypedNilInner", func() {
			limit.NewSharedConcurrencyLayer[string, string](sem).Wrap((*towertest.Mock[string, string])(nil))
		}, "limit.NewConcurrencyWith: inner is nil"},
		{"RateTypedNilInner", func() { limit.NewRate[string, string]((*towertest.Mock[string, string])(nil), 1, time.Second) }, "limit.NewRate: inner is nil"},
		{"RateNilServiceFunc", func() { limit.NewRate[string, string](tower.ServiceFunc[string, string](nil), 1, time.Second) }, "limit.NewRate: inner is nil"},
		{"RateLayerTypedNilInner", func() {
			limit.NewRateLayer[string, string](1, time.Second).Wrap((*towertest.Mock[string, string])(nil))
		}, "limit.NewRate: inner is nil"},
		{"ConcurrencyWithTypedNilSem", func() { limit.NewConcurrencyWith[string, string](echo, (*limit.Semaphore)(nil)) }, "limit.NewConcurrencyWith: sem is nil"},
	} {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}
