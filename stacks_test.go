package tower_test

// Interactions between middleware, one test per stack, named by the stack
// from the outside in. The programs in examples/placement,
// examples/queueing, examples/stack and examples/backpressure print the same
// scenarios as timelines, and their tests check every line.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towertest"
)

// tower's tests/builder.rs: builder_service, the middleware part of it:
// Buffer(5) > ConcurrencyLimit(5) > RateLimit(5 per 5s) over a mock, one
// request all the way through. TestBuilderWithMapSteps adds the map steps.
func TestStackBufferConcurrencyRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		buf := buffer.NewLayer[string, string](5)
		defer buf.Close()
		svc := stack.New[string, string]().
			Layer(buf).
			Layer(limit.NewConcurrencyLayer[string, string](5)).
			Layer(limit.NewRateLayer[string, string](5, 5*time.Second)).
			Service(mock)
		h.Allow(1)
		call := towertest.Go(func() (string, error) { return tower.Call(t.Context(), svc, "hello") })
		h.Expect(t, "hello").Respond("world")
		if got, err := call.Wait(); got != "world" || err != nil {
			t.Errorf("got %q, %v; want %q, nil", got, err, "world")
		}
	})
}

// admitted starts callers one at a time over svc, whose inner mock never
// answers, and returns how many got past Ready before one had to wait. It
// leaves every caller blocked; cancel ctx to release them.
func admitted(ctx context.Context, svc tower.Service[int, int], wg *sync.WaitGroup) int {
	var mu sync.Mutex
	n := 0
	for {
		passed := false
		wg.Go(func() {
			p, err := svc.Ready(ctx)
			if err != nil {
				return
			}
			mu.Lock()
			n++
			passed = true
			mu.Unlock()
			p.Call(ctx, 0)
		})
		synctest.Wait()
		mu.Lock()
		done := !passed
		mu.Unlock()
		if done {
			return n
		}
	}
}

// tower's ServiceBuilder doc: .buffer(100).concurrency_limit(10) admits 110
// requests, .concurrency_limit(10).buffer(100) only 10. Ours admits one more
// with the Buffer outside, the request in the worker's hand, as tower 0.5
// does.
func TestStackPlacementDecidesAdmission(t *testing.T) {
	tests := []struct {
		name  string
		order func(buf tower.Layer[int, int]) []tower.Layer[int, int]
		want  int
	}{
		{"Buffer(3) > ConcurrencyLimit(2)", func(buf tower.Layer[int, int]) []tower.Layer[int, int] {
			return []tower.Layer[int, int]{buf, limit.NewConcurrencyLayer[int, int](2)}
		}, 2 + 1 + 3},
		{"ConcurrencyLimit(2) > Buffer(3)", func(buf tower.Layer[int, int]) []tower.Layer[int, int] {
			return []tower.Layer[int, int]{limit.NewConcurrencyLayer[int, int](2), buf}
		}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, _ := towertest.NewMock[int, int]()
				buf := buffer.NewLayer[int, int](3)
				defer buf.Close()
				svc := tower.Stack(tt.order(buf)...).Wrap(mock)
				ctx, cancel := context.WithCancel(t.Context())
				var wg sync.WaitGroup
				if got := admitted(ctx, svc, &wg); got != tt.want {
					t.Errorf("admitted %d requests, want %d", got, tt.want)
				}
				cancel()
				wg.Wait()
			})
		})
	}
}

// LoadShed > ConcurrencyLimit(1): while one request is in flight, the next
// is shed at once; once it finishes, requests go through again.
func TestStackLoadShedConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc := stack.New[string, string]().
			Layer(loadshed.NewLayer[string, string]()).
			Layer(limit.NewConcurrencyLayer[string, string](1)).
			Service(mock)
		var wg sync.WaitGroup
		wg.Go(func() { tower.Call(t.Context(), svc, "first") })
		first := h.Expect(t, "first")

		start := time.Now()
		_, err := tower.Call(t.Context(), svc, "second")
		if !errors.Is(err, loadshed.ErrOverloaded) || time.Since(start) != 0 {
			t.Errorf("second request: got %v after %v, want %v at once", err, time.Since(start), loadshed.ErrOverloaded)
		}
		first.Respond("ok")
		wg.Wait()

		wg.Go(func() { tower.Call(t.Context(), svc, "third") })
		h.Expect(t, "third").Respond("ok")
		wg.Wait()
		if n := h.Calls(); n != 2 {
			t.Errorf("inner service got %d calls, want 2", n)
		}
	})
}

// timedCalls sends requests 1..n at once over svc, each from its own
// caller, against an inner service that answers each request after 100ms,
// and returns each caller's error and the time it got it.
func timedCalls(t *testing.T, svc tower.Service[int, int], n int) ([]error, []time.Duration) {
	errs := make([]error, n)
	at := make([]time.Duration, n)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = tower.Call(t.Context(), svc, i+1)
			at[i] = time.Since(start)
		})
		synctest.Wait()
	}
	wg.Wait()
	return errs, at
}

// slow answers after 100ms, or gives up when its context ends.
func slow(ctx context.Context, req int) (int, error) {
	select {
	case <-time.After(100 * time.Millisecond):
		return req, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// The three placements of a Timeout that examples/placement prints, asserted
// as errors and times rather than printed: outside a ConcurrencyLimit the
// wait for the permit does not count; outside a Buffer the time queued does.
func TestStackTimeoutPlacement(t *testing.T) {
	const d = 150 * time.Millisecond
	ms := time.Millisecond
	tests := []struct {
		name   string
		layers func(buf tower.Layer[int, int]) []tower.Layer[int, int]
		errs   []error
		at     []time.Duration
	}{
		{"Timeout > ConcurrencyLimit(1)", func(tower.Layer[int, int]) []tower.Layer[int, int] {
			return []tower.Layer[int, int]{timeout.NewLayer[int, int](d), limit.NewConcurrencyLayer[int, int](1)}
		}, []error{nil, nil, nil}, []time.Duration{100 * ms, 200 * ms, 300 * ms}},
		{"Timeout > Buffer > ConcurrencyLimit(1)", func(buf tower.Layer[int, int]) []tower.Layer[int, int] {
			return []tower.Layer[int, int]{timeout.NewLayer[int, int](d), buf, limit.NewConcurrencyLayer[int, int](1)}
		}, []error{nil, timeout.ErrElapsed, timeout.ErrElapsed}, []time.Duration{100 * ms, 150 * ms, 150 * ms}},
		{"Buffer > Timeout > ConcurrencyLimit(1)", func(buf tower.Layer[int, int]) []tower.Layer[int, int] {
			return []tower.Layer[int, int]{buf, timeout.NewLayer[int, int](d), limit.NewConcurrencyLayer[int, int](1)}
		}, []error{nil, nil, nil}, []time.Duration{100 * ms, 200 * ms, 300 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				buf := buffer.NewLayer[int, int](8)
				defer buf.Close()
				svc := tower.Stack(tt.layers(buf)...).Wrap(tower.ServiceFunc[int, int](slow))
				errs, at := timedCalls(t, svc, 3)
				for i := range 3 {
					if errs[i] != tt.errs[i] || at[i] != tt.at[i] {
						t.Errorf("request %d: got %v at %v, want %v at %v", i+1, errs[i], at[i], tt.errs[i], tt.at[i])
					}
				}
			})
		})
	}
}

// Timeout > Buffer > ConcurrencyLimit(1), as examples/queueing prints it: the
// request that timed out while queued never reaches the inner service.
func TestStackTimeoutBufferSkipsExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var started []int
		inner := tower.ServiceFunc[int, int](func(ctx context.Context, req int) (int, error) {
			mu.Lock()
			started = append(started, req)
			mu.Unlock()
			return slow(ctx, req)
		})
		buf := buffer.NewLayer[int, int](8)
		defer buf.Close()
		svc := stack.New[int, int]().
			Layer(timeout.NewLayer[int, int](150 * time.Millisecond)).
			Layer(buf).
			Layer(limit.NewConcurrencyLayer[int, int](1)).
			Service(inner)
		timedCalls(t, svc, 3)
		synctest.Wait()
		if len(started) != 2 || started[0] != 1 || started[1] != 2 {
			t.Errorf("the inner service started %v, want [1 2]", started)
		}
	})
}
