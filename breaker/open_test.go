package breaker_test

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/breaker"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/towertest"
)

// The open delay is base after a first trip, doubles at each failed
// probe, stops at max, and starts again from base once the breaker has
// closed: with base 1s and max 8s, 1s 2s 4s 8s 8s, then 1s.
func TestOpenDelayGrowsAndResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithConsecutiveFailures(1))
		send(t, b, bad)
		for i, want := range []time.Duration{1, 2, 4, 8, 8} {
			got, p := openFor(t, b)
			if got != want*time.Second {
				t.Errorf("delay %d: got %v, want %v", i+1, got, want*time.Second)
			}
			expectState(t, b, breaker.HalfOpen)
			p.Call(t.Context(), bad)
			expectState(t, b, breaker.Open)
		}
		_, p := openFor(t, b)
		p.Call(t.Context(), ok)
		expectState(t, b, breaker.Closed)
		send(t, b, bad)
		if got, _ := openFor(t, b); got != time.Second {
			t.Errorf("delay after closing: got %v, want 1s", got)
		}
	})
}

// Just before the delay ends the breaker is not ready; at its end it is,
// without waiting.
func TestOpenDelayExactEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithConsecutiveFailures(1))
		send(t, b, bad)
		time.Sleep(time.Second - 1)
		expectNotReady(t, b)
		expectState(t, b, breaker.Open)
		time.Sleep(time.Nanosecond)
		expectState(t, b, breaker.Open) // until a Ready comes
		p := readyNow(t, b)
		expectState(t, b, breaker.HalfOpen)
		p.Release()
	})
}

// The delay is jittered down by jitter·r of itself, with r from the
// random source: exactly, for a fixed source. With r near 1 it stays
// above d·(1-jitter); with r = 0 it is d.
func TestJitter(t *testing.T) {
	for _, tt := range []struct {
		jitter, r float64
		want      time.Duration
	}{
		{0.5, 0, 4 * time.Second},
		{0.5, 0.5, 3 * time.Second},
		{0.5, math.Nextafter(1, 0), 2*time.Second + 1},
		{1, 0.25, 3 * time.Second},
		{0.25, 0.5, 3500 * ms},
	} {
		synctest.Test(t, func(t *testing.T) {
			b := breaker.New(backend, breaker.AnyError, breaker.WithConsecutiveFailures(1),
				breaker.WithOpenDelay(4*time.Second, time.Minute),
				breaker.WithJitter(tt.jitter), breaker.WithRandom(func() float64 { return tt.r }))
			send(t, b, bad)
			if got, p := openFor(t, b); got != tt.want {
				t.Errorf("jitter %v, r %v: got %v, want %v", tt.jitter, tt.r, got, tt.want)
			} else {
				p.Release()
			}
		})
	}
}

// The default jitter is 0.5 and the default delay 5s: with r = 0.5, the
// first delay is 3.75s; the cap is 300s.
func TestDefaultDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := breaker.New(backend, breaker.AnyError, breaker.WithConsecutiveFailures(1),
			breaker.WithRandom(func() float64 { return 0.5 }))
		send(t, b, bad)
		for i, want := range []time.Duration{3750, 7500, 15000, 30000, 60000, 120000, 225000, 225000} {
			got, p := openFor(t, b)
			if got != want*ms {
				t.Errorf("delay %d: got %v, want %v", i+1, got, want*ms)
			}
			p.Call(t.Context(), bad)
		}
	})
}

// A half-open breaker hands out exactly the probe count of permits; the
// next Ready waits until one is released, which frees its place at once.
func TestHalfOpenAdmitsProbeCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithConsecutiveFailures(1), breaker.WithProbes(2))
		send(t, b, bad)
		time.Sleep(time.Second)
		p1 := readyNow(t, b)
		p2 := readyNow(t, b)
		expectNotReady(t, b)
		waiter := towertest.GoReady(t.Context(), b)
		waiter.ExpectPending(t)
		time.Sleep(time.Hour)
		waiter.ExpectPending(t)
		p1.Release()
		synctest.Wait()
		p3 := waiter.Value(t)
		expectNotReady(t, b)
		expectState(t, b, breaker.HalfOpen)
		p2.Release()
		p4 := readyNow(t, b)
		p3.Release()
		p4.Release()
	})
}

// With one probe (the default), the second Ready in half-open waits; a
// probe released unused lets it through.
func TestSingleProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithConsecutiveFailures(1))
		send(t, b, bad)
		time.Sleep(time.Second)
		p := readyNow(t, b)
		expectNotReady(t, b)
		p.Release()
		p = readyNow(t, b)
		expectState(t, b, breaker.HalfOpen)
		p.Call(t.Context(), ok)
		expectState(t, b, breaker.Closed)
	})
}

// WithSuccesses(2): one probe success leaves the breaker half-open and
// frees the probe's place; the second closes it.
func TestProbeSuccessesClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithConsecutiveFailures(1), breaker.WithSuccesses(2))
		send(t, b, bad)
		time.Sleep(time.Second)
		send(t, b, ok)
		expectState(t, b, breaker.HalfOpen)
		send(t, b, ok)
		expectState(t, b, breaker.Closed)
	})
	// A failure after a success opens it again, for a doubled delay.
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithConsecutiveFailures(1), breaker.WithSuccesses(3))
		send(t, b, bad)
		time.Sleep(time.Second)
		send(t, b, ok)
		send(t, b, ok)
		send(t, b, bad)
		expectState(t, b, breaker.Open)
		if got, p := openFor(t, b); got != 2*time.Second {
			t.Errorf("got %v, want 2s", got)
		} else {
			p.Release()
		}
	})
}

// While open, ReadyNow says not ready at once, and a LoadShed outside
// sheds at once with ErrOverloaded, sending nothing.
func TestOpenShedsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[int, int]()
		b := breaker.New(m, breaker.AnyError, breaker.WithConsecutiveFailures(1))
		c := towertest.GoRequest(t.Context(), b, bad)
		h.ExpectSettled(t, bad).Fail(errBoom)
		c.ExpectError(t, errBoom)
		expectState(t, b, breaker.Open)
		start := time.Now()
		if _, ok, err := tower.ReadyNow[int, int](b); ok || err != nil {
			t.Errorf("ReadyNow: got %t, %v; want false, nil", ok, err)
		}
		shed := towertest.GoRequest(t.Context(), loadshed.New[int, int](b), ok)
		shed.ExpectError(t, loadshed.ErrOverloaded)
		if got := shed.Since(start); got != 0 {
			t.Errorf("shed after %v, want 0", got)
		}
		h.ExpectIdle(t, 1)
	})
}

// A Ready waiting while open wakes exactly when the delay ends; one whose
// ctx ends first returns ctx.Err() then, unchanged.
func TestWaitingReadyWakesAtDelayEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithConsecutiveFailures(1), breaker.WithProbes(2))
		send(t, b, bad)
		time.Sleep(300 * ms)
		ctx, cancel := context.WithTimeout(t.Context(), 500*ms)
		defer cancel()
		early := towertest.GoReady(ctx, b)
		w1 := towertest.GoReady(t.Context(), b)
		w2 := towertest.GoReady(t.Context(), b)
		early.ExpectError(t, context.DeadlineExceeded)
		early.ExpectElapsed(t, 500*ms)
		w1.ExpectElapsed(t, 700*ms)
		w2.ExpectElapsed(t, 700*ms)
		p1, p2 := w1.Value(t), w2.Value(t)
		p1.Release()
		p2.Release()
	})
	// A cancelled wait returns context.Canceled.
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithConsecutiveFailures(1))
		send(t, b, bad)
		ctx, cancel := context.WithCancel(t.Context())
		w := towertest.GoReady(ctx, b)
		time.Sleep(100 * ms)
		w.ExpectPending(t)
		cancel()
		w.ExpectError(t, context.Canceled)
		w.ExpectElapsed(t, 100*ms)
	})
}

// A Ready waiting for a probe's place while another probe fails stays
// waiting, now for the doubled delay, and wakes when it ends.
func TestWaiterFollowsReopen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithConsecutiveFailures(1))
		send(t, b, bad)
		time.Sleep(time.Second)
		p := readyNow(t, b)
		w := towertest.GoReady(t.Context(), b)
		w.ExpectPending(t)
		time.Sleep(100 * ms)
		p.Call(t.Context(), bad) // open again, for 2s
		w.ExpectPending(t)
		w.ExpectElapsed(t, 2100*ms)
		pw := w.Value(t)
		expectState(t, b, breaker.HalfOpen)
		pw.Call(t.Context(), ok)
		expectState(t, b, breaker.Closed)
	})
}

// Waiters in half-open with every place taken are all let through when
// the probe closes the breaker.
func TestCloseLetsWaitersThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithConsecutiveFailures(1))
		send(t, b, bad)
		time.Sleep(time.Second)
		p := readyNow(t, b)
		var ws []*towertest.Outcome[tower.Permit[int, int]]
		for range 3 {
			ws = append(ws, towertest.GoReady(t.Context(), b))
		}
		ws[2].ExpectPending(t)
		p.Call(t.Context(), ok)
		for _, w := range ws {
			w.ExpectElapsed(t, 0)
			p := w.Value(t)
			p.Release()
		}
	})
}

// Isolate opens the breaker until Reset, for no matter how long; Reset
// closes it and lets a waiting Ready through at once.
func TestIsolateAndReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c changes
		b := newBreaker(breaker.WithStateChange(c.record))
		b.Isolate()
		expectState(t, b, breaker.Open)
		w := towertest.GoReady(t.Context(), b)
		time.Sleep(1000 * time.Hour)
		w.ExpectPending(t)
		expectNotReady(t, b)
		b.Reset()
		w.ExpectElapsed(t, 1000*time.Hour)
		p := w.Value(t)
		p.Release()
		expectState(t, b, breaker.Closed)
		if got, want := c.String(), "closed>open open>closed"; got != want {
			t.Errorf("changes %q, want %q", got, want)
		}
	})
	// Isolating an open breaker keeps it open past its delay; Reset of a
	// closed one starts its count again.
	synctest.Test(t, func(t *testing.T) {
		var c changes
		b := newBreaker(breaker.WithConsecutiveFailures(2), breaker.WithStateChange(c.record))
		sendN(t, b, bad, 2)
		b.Isolate()
		time.Sleep(time.Hour)
		expectNotReady(t, b)
		b.Reset()
		send(t, b, bad)
		b.Reset()
		send(t, b, bad)
		expectState(t, b, breaker.Closed)
		if got, want := c.String(), "closed>open open>closed"; got != want {
			t.Errorf("changes %q, want %q", got, want)
		}
	})
}
