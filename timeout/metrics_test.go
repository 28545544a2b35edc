package timeout_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towertest"
)

// takes is an inner service that takes as long as its request says, or
// gives up with its context's error as soon as its context ends.
func takes(ctx context.Context, req string) (string, error) {
	d, err := time.ParseDuration(req)
	if err != nil {
		return "", err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return req, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// A Timeout of 100ms counts each call it ends with ErrElapsed, at the
// deadline: not a call in time, nor one ended by the caller's own deadline
// or cancellation.
func TestMetricsTimedOut(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var c metrics.Counts
				svc := timeout.New[string, string](tower.ServiceFunc[string, string](takes), 100*ms,
					append(m.opts, timeout.WithMetrics(&c))...)
				start := time.Now()
				deadline, cancel1 := context.WithTimeout(t.Context(), 80*ms)
				defer cancel1()
				cancelled, cancel2 := context.WithCancel(t.Context())
				calls := []struct {
					ctx  context.Context
					req  string
					want string
				}{
					{t.Context(), "50ms", `("50ms", <nil>) at 50ms`},
					{t.Context(), "150ms", `("", request timed out) at 100ms`},
					{t.Context(), "1s", `("", request timed out) at 100ms`},
					{deadline, "1s", `("", context deadline exceeded) at 80ms`},
					{cancelled, "1s", `("", context canceled) at 30ms`},
				}
				var waits []func() outcome
				for _, call := range calls {
					waits = append(waits, callAt(call.ctx, start, svc, call.req))
				}
				time.Sleep(30 * ms)
				cancel2()
				time.Sleep(69 * ms)
				synctest.Wait()
				if got := c.Snapshot(); got != (metrics.Snapshot{}) {
					t.Errorf("at 99ms: got %v, want {}", got)
				}
				time.Sleep(1 * ms)
				synctest.Wait()
				if got, want := c.Snapshot(), (metrics.Snapshot{TimedOut: 2}); got != want {
					t.Errorf("at 100ms: got %v, want %v", got, want)
				}
				for i, call := range calls {
					if got := waits[i]().String(); got != call.want {
						t.Errorf("%s: got %s, want %s", call.req, got, call.want)
					}
				}
				if got, want := c.Snapshot(), (metrics.Snapshot{TimedOut: 2}); got != want {
					t.Errorf("at the end: got %v, want %v", got, want)
				}
			})
		})
	}
}

// Timeout(200ms) > Timeout(100ms) over an inner service that takes 150ms:
// the inner Timeout times the call out and counts it; the outer one, whose
// deadline has not passed, passes the ErrElapsed on without counting it.
// (The inner service ignores its context: see the report on nested
// Timeouts whose inner call asks for Done.)
func TestMetricsNestedTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var outer, inner metrics.Counts
		svc := stack.New[string, string]().
			Layer(timeout.NewLayer[string, string](200*ms, timeout.WithMetrics(&outer))).
			Layer(timeout.NewLayer[string, string](100*ms, timeout.WithMetrics(&inner))).
			Service(sleeper(150 * ms))
		start := time.Now()
		_, err := tower.Call(t.Context(), svc, "x")
		if err != timeout.ErrElapsed || time.Since(start) != 150*ms {
			t.Fatalf("got %v at %v, want %v at 150ms", err, time.Since(start), timeout.ErrElapsed)
		}
		if got, want := fmt.Sprint(inner.Get(metrics.TimedOut), outer.Get(metrics.TimedOut)), "1 0"; got != want {
			t.Errorf("got TimedOut inner, outer = %s, want %s", got, want)
		}
	})
}

// BenchmarkTimeoutMetrics is BenchmarkTimeout with a sink, which a call in
// time does not touch.
func BenchmarkTimeoutMetrics(b *testing.B) {
	towertest.Bench(b, timeout.New(echo, time.Second, timeout.WithMetrics(new(metrics.Counts))), 1)
}

// timedOutPanics is a sink whose Add of TimedOut panics.
type timedOutPanics struct{}

func (timedOutPanics) Add(k metrics.Kind, _ int64) {
	if k == metrics.TimedOut {
		panic("sink exploded")
	}
}
func (timedOutPanics) Observe(time.Duration, metrics.Outcome) {}

// A sink that panics as a call times out, at 100ms: the panic goes on up
// to the caller, and the inner call has ended, its ConcurrencyLimit(1)
// permit back, so the next call is served.
func TestMetricsPanickingSink(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := limit.NewConcurrency[string, string](tower.ServiceFunc[string, string](takes), 1)
				svc := timeout.New[string, string](inner, 100*ms, append(m.opts, timeout.WithMetrics(timedOutPanics{}))...)
				start := time.Now()
				towertest.Panics(t, "sink exploded", func() { tower.Call[string, string](t.Context(), svc, "1s") })
				if d := time.Since(start); d != 100*ms {
					t.Errorf("the panic came at %v, want 100ms", d)
				}
				synctest.Wait()
				if n := inner.Semaphore().Available(); n != 1 {
					t.Fatalf("%d of 1 permits free after the panic, want 1", n)
				}
				if res, err := tower.Call[string, string](t.Context(), svc, "10ms"); res != "10ms" || err != nil {
					t.Errorf("next call: got %q, %v; want 10ms", res, err)
				}
			})
		})
	}
}
