package breaker_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/breaker"
	"github.com/towergo/tower/metrics"
)

// State's String names the three states, and says what another value is.
func TestStateString(t *testing.T) {
	for s, want := range map[breaker.State]string{
		breaker.Closed:   "closed",
		breaker.Open:     "open",
		breaker.HalfOpen: "half-open",
		0:                "State(0)",
		4:                "State(4)",
	} {
		if got := s.String(); got != want {
			t.Errorf("State(%d).String() = %q, want %q", uint8(s), got, want)
		}
	}
}

// A Layer makes a breaker per service: one tripping leaves the other
// closed. They share the options' sink.
func TestLayerBreakerPerService(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sink metrics.Counts
		l := breaker.NewLayer[int, int](breaker.AnyError, breaker.WithConsecutiveFailures(1), breaker.WithMetrics(&sink))
		a, b := l.Wrap(backend), l.Wrap(backend)
		send(t, a, bad)
		expectNotReady(t, a)
		send(t, b, ok)
		send(t, b, bad)
		if got := sink.Get(metrics.Tripped); got != 2 {
			t.Errorf("Tripped %d, want 2", got)
		}
	})
}

// Many goroutines share a breaker whose backend fails at random, with
// several probes; they stop with their contexts. Every Ready ends with a
// permit or ctx.Err(), the breaker goes through its states, the metrics
// agree with the final state, and nothing is left running. Run with
// -race and -cpu 1,2,4.
func TestRace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const probes = 3
		var halfOpen atomic.Int64 // calls seen while half-open
		var b *breaker.Breaker[int, int]
		svc := tower.ServiceFunc[int, int](func(ctx context.Context, req int) (int, error) {
			if b.State() == breaker.HalfOpen {
				halfOpen.Add(1)
			}
			time.Sleep(time.Duration(req%7) * ms)
			if req%3 == 0 {
				return 0, errBoom
			}
			return req, nil
		})
		var sink metrics.Counts
		b = breaker.New(svc, breaker.AnyError, breaker.WithConsecutiveFailures(2),
			breaker.WithFailureRatio(0.3, 5, breaker.LastDuration(time.Second)),
			breaker.WithOpenDelay(10*ms, 100*ms), breaker.WithProbes(probes), breaker.WithSuccesses(2),
			breaker.WithMetrics(&sink))
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), 1))
				for ctx.Err() == nil {
					p, err := b.Ready(ctx)
					if err != nil {
						if err != ctx.Err() {
							t.Errorf("Ready: %v, want ctx.Err()", err)
						}
						return
					}
					if r.IntN(10) == 0 {
						p.Release()
						continue
					}
					p.Call(ctx, r.IntN(100))
				}
			})
		}
		wg.Wait()
		open := int64(0)
		if b.State() != breaker.Closed {
			open = 1
		}
		if got := sink.Get(metrics.Open); got != open {
			t.Errorf("Open %d in state %v", got, b.State())
		}
		if sink.Get(metrics.Tripped) == 0 || halfOpen.Load() == 0 {
			t.Errorf("tripped %d times, %d calls half-open; want both", sink.Get(metrics.Tripped), halfOpen.Load())
		}
		b.Reset()
		if got := sink.Get(metrics.Open); got != 0 {
			t.Errorf("Open %d after Reset", got)
		}
	})
}
