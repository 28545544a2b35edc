package tower_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/breaker"
	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/retry"
)

// One budget bounds all the extra load of a client: its retries, its
// hedges and its breaker's probes. A backend serves in 10ms for 2s, so
// that the hedge learns its latency, then fails every request after 50ms,
// past the hedge's delay; the client sends 100 requests a second for 10s,
// and retries up to 3 attempts. With a budget of 20% and no reserve, the
// backend gets at most 1.2 times the requests, retries and hedges and
// probes together; with the breaker, far fewer, since an open breaker
// holds requests back rather than letting them fail. Without DrawOnly, the
// Hedge under the Retry deposits for each attempt it sees, and the bound
// does not hold.
func TestSharedBudgetBoundsExtraLoad(t *testing.T) {
	const requests = 1000
	for _, tt := range []struct {
		name     string
		drawOnly bool
		breaker  bool
		atMost   float64 // backend calls per request
		atLeast  float64
	}{
		{"RetryHedge", true, false, 1.2, 1.15},
		{"RetryHedgeBreaker", true, true, 1.2, 0.2}, // the open breaker holds requests back
		{"HedgeDepositsToo", false, false, 2, 1.25},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var calls atomic.Int64
				backend := tower.ServiceFunc[int, string](func(ctx context.Context, _ int) (string, error) {
					calls.Add(1)
					failing := time.Since(start) >= 2*time.Second
					d := 10 * time.Millisecond
					if failing {
						d = 50 * time.Millisecond
					}
					select {
					case <-time.After(d):
					case <-ctx.Done():
						return "", ctx.Err()
					}
					if failing {
						return "", errors.New("down")
					}
					return "ok", nil
				})
				budget := retry.NewTPSBudget(10*time.Second, 0, 0.2)
				hedgeBudget := retry.Budget(budget)
				if tt.drawOnly {
					hedgeBudget = retry.DrawOnly(budget)
				}
				var svc tower.Service[int, string] = backend
				if tt.breaker {
					svc = breaker.New(svc, breaker.AnyError[string], breaker.WithBudget(budget),
						breaker.WithOpenDelay(100*time.Millisecond, time.Second))
				}
				svc = hedge.New(svc, hedge.Idempotent[int]{}, 10, 0.5, time.Second, hedge.WithBudget(hedgeBudget))
				svc = retry.New(svc, retry.NewPolicy[int, string](retry.AnyError, retry.WithBudget(budget)))

				var wg sync.WaitGroup
				for i := range requests {
					time.Sleep(time.Until(start.Add(time.Duration(i) * 10 * time.Millisecond)))
					wg.Go(func() {
						ctx, cancel := context.WithTimeout(context.Background(), time.Second)
						defer cancel()
						tower.Call(ctx, svc, i)
					})
				}
				wg.Wait()
				per := float64(calls.Load()) / requests
				if per > tt.atMost || per < tt.atLeast {
					t.Errorf("%d backend calls for %d requests, %.3f each: want between %.2f and %.2f", calls.Load(), requests, per, tt.atLeast, tt.atMost)
				}
				t.Logf("%.3f backend calls per request", per)
			})
		})
	}
}
