package limit_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// countsAt sleeps until at after start, lets the bubble settle, and fails t
// unless c holds want.
func countsAt(t *testing.T, start time.Time, at time.Duration, c *metrics.Counts, want metrics.Snapshot) {
	t.Helper()
	time.Sleep(at - time.Since(start))
	synctest.Wait()
	if got := c.Snapshot(); got != want {
		t.Errorf("at %v: got %v, want %v", time.Since(start), got, want)
	}
}

// sleeper answers its request after d.
func sleeper(d time.Duration) tower.ServiceFunc[string, string] {
	return func(_ context.Context, req string) (string, error) {
		time.Sleep(d)
		return req, nil
	}
}

// callAll sends each request through s, Ready and Call, on goroutines of
// their own started in order, and returns a function that waits for all of
// them and returns the times they were answered, since start.
func callAll(t *testing.T, s svc, start time.Time, reqs ...string) func() []time.Duration {
	var wg sync.WaitGroup
	at := make([]time.Duration, len(reqs))
	errs := make([]error, len(reqs))
	for i, req := range reqs {
		wg.Go(func() {
			_, errs[i] = tower.Call(t.Context(), s, req)
			at[i] = time.Since(start)
		})
		synctest.Wait()
	}
	return func() []time.Duration {
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("call %d: got error %v, want none", i, err)
			}
		}
		return at
	}
}

// A limit of 1, three callers, 100ms per call: one in flight and the others
// waiting in line, one fewer every 100ms.
func TestConcurrencyMetricsThreeCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		cl := limit.NewConcurrency[string, string](sleeper(100*time.Millisecond), 1, limit.WithMetrics(&c))
		start := time.Now()
		wait := callAll(t, cl, start, "a", "b", "c")
		countsAt(t, start, 0, &c, metrics.Snapshot{InFlight: 1, Waiting: 2})
		countsAt(t, start, 99*time.Millisecond, &c, metrics.Snapshot{InFlight: 1, Waiting: 2})
		countsAt(t, start, 100*time.Millisecond, &c, metrics.Snapshot{InFlight: 1, Waiting: 1})
		countsAt(t, start, 200*time.Millisecond, &c, metrics.Snapshot{InFlight: 1})
		countsAt(t, start, 300*time.Millisecond, &c, metrics.Snapshot{})
		if got, want := fmt.Sprint(wait()), "[100ms 200ms 300ms]"; got != want {
			t.Errorf("answered at %s, want %s", got, want)
		}
	})
}

// Every way out of Waiting and InFlight counts the request out: a waiter
// whose ctx ends, a permit released unused, a call that fails, an inner
// Ready that fails, a call that panics. Asking with a done ctx never waits.
func TestConcurrencyMetricsEveryWayOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		mock, h := towertest.NewMock[string, string]()
		cl := limit.NewConcurrency[string, string](mock, 1, limit.WithMetrics(&c))
		want := func(what string, s metrics.Snapshot) {
			t.Helper()
			synctest.Wait()
			if got := c.Snapshot(); got != s {
				t.Errorf("%s: got %v, want %v", what, got, s)
			}
		}
		p := towertest.MustReady(t, cl)
		want("one permit", metrics.Snapshot{InFlight: 1})
		if _, ok := towertest.ReadyNow(t, cl); ok {
			t.Fatal("ReadyNow with the only permit taken: got ready, want not ready")
		}
		want("after ReadyNow", metrics.Snapshot{InFlight: 1})

		ctx, cancel := context.WithCancel(t.Context())
		r := towertest.GoReady(ctx, cl)
		want("a waiter", metrics.Snapshot{InFlight: 1, Waiting: 1})
		cancel()
		r.Wait()
		want("waiter cancelled", metrics.Snapshot{InFlight: 1})

		r = towertest.GoReady(t.Context(), cl)
		p.Release()
		p = r.Value(t)
		want("released to the waiter", metrics.Snapshot{InFlight: 1})
		call := towertest.GoCall(t.Context(), p, "x")
		h.ExpectSettled(t, "x").Fail(errors.New("boom"))
		call.Wait()
		want("call failed", metrics.Snapshot{})

		h.FailReady(errors.New("broken"))
		if _, err := cl.Ready(t.Context()); err == nil {
			t.Fatal("Ready: got a permit, want the inner service's error")
		}
		want("inner Ready failed", metrics.Snapshot{})
	})
}

// A call that panics leaves InFlight.
func TestConcurrencyMetricsPanickingCall(t *testing.T) {
	var c metrics.Counts
	inner := tower.ServiceFunc[string, string](func(context.Context, string) (string, error) { panic("boom") })
	cl := limit.NewConcurrency[string, string](inner, 1, limit.WithMetrics(&c))
	p := towertest.MustReady(t, cl)
	towertest.Panics(t, "boom", func() { p.Call(t.Context(), "x") })
	if got := c.Snapshot(); got != (metrics.Snapshot{}) {
		t.Errorf("got %v, want {}", got)
	}
}

// panicSink panics when InFlight moves by delta.
type panicSink struct{ delta int64 }

func (s panicSink) Add(k metrics.Kind, delta int64) {
	if k == metrics.InFlight && delta == s.delta {
		panic("sink exploded")
	}
}
func (panicSink) Observe(time.Duration, metrics.Outcome) {}

// A sink that panics, as the permit is taken or as it is given back, on
// the caller's goroutine: the panic goes on up to the caller, and the
// permit comes back all the same.
func TestConcurrencyPanickingSinkReleasesPermit(t *testing.T) {
	for _, tt := range []struct {
		name string
		use  func(t *testing.T, cl *limit.Concurrency[string, string])
		sink panicSink
	}{
		{"Ready", func(t *testing.T, cl *limit.Concurrency[string, string]) { cl.Ready(t.Context()) }, panicSink{+1}},
		{"Call", func(t *testing.T, cl *limit.Concurrency[string, string]) {
			p := towertest.MustReady(t, cl)
			p.Call(t.Context(), "x")
		}, panicSink{-1}},
		{"Release", func(t *testing.T, cl *limit.Concurrency[string, string]) {
			p := towertest.MustReady(t, cl)
			p.Release()
		}, panicSink{-1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cl := limit.NewConcurrency[string, string](echo, 1, limit.WithMetrics(tt.sink))
			towertest.Panics(t, "sink exploded", func() { tt.use(t, cl) })
			checkSem(t, cl.Semaphore(), 1, 0)
		})
	}
}

// Services sharing a semaphore each count their own requests.
func TestConcurrencyMetricsShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c1, c2 metrics.Counts
		sem := limit.NewSemaphore(1)
		s1 := limit.NewConcurrencyWith[string, string](echo, sem, limit.WithMetrics(&c1))
		s2 := limit.NewSharedConcurrencyLayer[string, string](sem, limit.WithMetrics(&c2)).Wrap(echo)
		p := towertest.MustReady(t, s1)
		r := towertest.GoReady(t.Context(), s2)
		if got, want := c1.Snapshot(), (metrics.Snapshot{InFlight: 1}); got != want {
			t.Errorf("first service: got %v, want %v", got, want)
		}
		if got, want := c2.Snapshot(), (metrics.Snapshot{Waiting: 1}); got != want {
			t.Errorf("second service: got %v, want %v", got, want)
		}
		p.Release()
		echoCall(t, r.Value(t), "x")
		if got, want := c1.Snapshot(), (metrics.Snapshot{}); got != want {
			t.Errorf("first service after: got %v, want %v", got, want)
		}
		if got, want := c2.Snapshot(), (metrics.Snapshot{}); got != want {
			t.Errorf("second service after: got %v, want %v", got, want)
		}
	})
}

// The layer passes its options to every limit it makes.
func TestConcurrencyLayerMetrics(t *testing.T) {
	var c metrics.Counts
	svc := limit.NewConcurrencyLayer[string, string](2, limit.WithMetrics(&c)).Wrap(echo)
	p1, p2 := towertest.MustReady(t, svc), towertest.MustReady(t, svc)
	if got, want := c.Get(metrics.InFlight), int64(2); got != want {
		t.Errorf("got InFlight %d, want %d", got, want)
	}
	p1.Release()
	p2.Release()
	if got := c.Get(metrics.InFlight); got != 0 {
		t.Errorf("got InFlight %d, want 0", got)
	}
}

// A rate of 1 per 100ms, three callers at 0ms: the first goes through, the
// others wait for a window each.
func TestRateMetricsThreeCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		rl := limit.NewRate[string, string](echo, 1, 100*time.Millisecond, limit.WithMetrics(&c))
		start := time.Now()
		wait := callAll(t, rl, start, "a", "b", "c")
		countsAt(t, start, 0, &c, metrics.Snapshot{Waiting: 2})
		countsAt(t, start, 99*time.Millisecond, &c, metrics.Snapshot{Waiting: 2})
		countsAt(t, start, 100*time.Millisecond, &c, metrics.Snapshot{Waiting: 1})
		countsAt(t, start, 200*time.Millisecond, &c, metrics.Snapshot{})
		if got, want := fmt.Sprint(wait()), "[0s 100ms 200ms]"; got != want {
			t.Errorf("answered at %s, want %s", got, want)
		}
	})
}

// A waiter whose ctx ends leaves Waiting; asking with a done ctx never
// waits; the layer passes its options on.
func TestRateMetricsWaiterLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		rl := limit.NewRateLayer[string, string](1, time.Second, limit.WithMetrics(&c)).Wrap(echo)
		callNow(t, rl, "a")
		if _, ok := towertest.ReadyNow(t, rl); ok {
			t.Fatal("ReadyNow in a full window: got ready, want not ready")
		}
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		r := towertest.GoReady(ctx, rl)
		countsAt(t, start, 299*time.Millisecond, &c, metrics.Snapshot{Waiting: 1})
		_, err := r.Wait()
		if err != context.DeadlineExceeded || r.Since(start) != 300*time.Millisecond {
			t.Fatalf("Ready: got %v at %v, want %v at 300ms", err, r.Since(start), context.DeadlineExceeded)
		}
		countsAt(t, start, 300*time.Millisecond, &c, metrics.Snapshot{})
	})
}

// With a sink, the request path still allocates nothing.
func TestMetricsDoNotAllocate(t *testing.T) {
	var c metrics.Counts
	tests := []struct {
		name string
		svc  tower.Service[int, int]
	}{
		{"Concurrency", limit.NewConcurrency(echoInt, 1, limit.WithMetrics(&c))},
		{"Rate", limit.NewRate(echoInt, limit.MaxRate, time.Hour, limit.WithMetrics(&c))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			allocs := testing.AllocsPerRun(100, func() {
				if _, err := tower.Call(ctx, tt.svc, 1); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("got %v allocations per request, want 0", allocs)
			}
		})
	}
}

func TestOptionPanics(t *testing.T) {
	sem := limit.NewSemaphore(1)
	tests := []struct {
		name, want string
		f          func()
	}{
		{"NewConcurrency", "limit.NewConcurrency: option 0 is nil", func() { limit.NewConcurrency[string, string](echo, 1, nil) }},
		{"NewConcurrencyWith", "limit.NewConcurrencyWith: option 1 is nil", func() {
			limit.NewConcurrencyWith[string, string](echo, sem, limit.WithMetrics(nil), nil)
		}},
		{"NewConcurrencyLayer", "limit.NewConcurrencyLayer: option 0 is nil", func() { limit.NewConcurrencyLayer[string, string](1, nil) }},
		{"NewSharedConcurrencyLayer", "limit.NewSharedConcurrencyLayer: option 0 is nil", func() {
			limit.NewSharedConcurrencyLayer[string, string](sem, nil)
		}},
		{"NewRate", "limit.NewRate: option 0 is nil", func() { limit.NewRate[string, string](echo, 1, time.Second, nil) }},
		{"NewRateLayer", "limit.NewRateLayer: option 0 is nil", func() { limit.NewRateLayer[string, string](1, time.Second, nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}

// waitingPanicSink panics when Waiting changes by delta.
type waitingPanicSink struct{ delta int64 }

func (s waitingPanicSink) Add(k metrics.Kind, delta int64) {
	if k == metrics.Waiting && delta == s.delta {
		panic("sink exploded")
	}
}
func (waitingPanicSink) Observe(time.Duration, metrics.Outcome) {}

// A sink that panics while a caller waits for a Rate's window sends the
// panic up to that caller with nothing kept: the caller leaves the queue,
// or gives back the place it was granted, and the next caller gets that
// place when the window opens, at 100ms. Without that, the place went to a
// caller that was no longer there, and the next caller waited until 200ms.
func TestRatePanickingSinkWhileWaiting(t *testing.T) {
	for _, on := range []int64{+1, -1} {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			rl := limit.NewRate[string, string](echo, 1, 100*time.Millisecond, limit.WithMetrics(waitingPanicSink{on}))
			if _, ok, err := tower.ReadyNow[string, string](rl); !ok || err != nil {
				t.Fatalf("first ReadyNow: %v, %v", ok, err)
			}
			towertest.Panics(t, "sink exploded", func() { rl.Ready(t.Context()) })
			if on == -1 {
				// The panic came as the place was granted, at 100ms: the
				// place went back to that window, and is free now.
				if _, ok, err := tower.ReadyNow[string, string](rl); !ok || err != nil {
					t.Errorf("sink panicking on -1: ReadyNow at %v got %v, %v; want the place given back", time.Since(start), ok, err)
				}
				return
			}
			// The panic came as the caller queued, at 0ms: the place of the
			// window that opens at 100ms is free for the next caller.
			time.Sleep(100 * time.Millisecond)
			if _, ok, err := tower.ReadyNow[string, string](rl); !ok || err != nil {
				t.Errorf("sink panicking on +1: ReadyNow at %v got %v, %v; want the next window's place", time.Since(start), ok, err)
			}
		})
	}
}

// A sink that panics as a caller starts or stops waiting for a
// Concurrency's permit: the panic goes on up to the waiter, which holds
// nothing after it, neither a place in the queue nor a permit, whether its
// wait ended with the permit (at 100ms) or with its ctx (at 50ms).
func TestConcurrencyPanickingSinkWhileWaiting(t *testing.T) {
	for _, tt := range []struct {
		name     string
		delta    int64         // the Add of Waiting that panics
		deadline time.Duration // of the waiter's ctx
		end      time.Duration // when its wait ends
	}{
		{"WaitBegins", +1, time.Hour, 0},
		{"WaitEndsGranted", -1, time.Hour, 100 * time.Millisecond},
		{"WaitEndsCancelled", -1, 50 * time.Millisecond, 50 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cl := limit.NewConcurrency[string, string](echo, 1, limit.WithMetrics(waitingPanicSink{tt.delta}))
				start := time.Now()
				first := towertest.MustReady(t, cl)
				go func() {
					time.Sleep(100 * time.Millisecond)
					first.Release()
				}()
				ctx, cancel := context.WithTimeout(t.Context(), tt.deadline)
				defer cancel()
				r := towertest.Go(func() (v any, err error) {
					defer func() { v = recover() }()
					cl.Ready(ctx)
					return nil, nil
				})
				if v, _ := r.Wait(); v != "sink exploded" {
					t.Fatalf("the waiter got panic %v, want the sink's", v)
				}
				if got := r.Since(start); got != tt.end {
					t.Errorf("the wait ended at %v, want %v", got, tt.end)
				}
				time.Sleep(time.Until(start.Add(100 * time.Millisecond)))
				synctest.Wait()
				checkSem(t, cl.Semaphore(), 1, 0)
				p, ok := towertest.ReadyNow(t, cl)
				if !ok {
					t.Fatal("ReadyNow at 100ms: not ready, want the permit back")
				}
				p.Release()
			})
		})
	}
}
