package adaptive_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/timeout"
)

// Through the limiter, under virtual time: 30 callers keep a service that
// answers in 10ms busy; AIMD adds 1 per 1s window, then, once every call
// times out, multiplies the limit by 0.9 per window. The sink's Limit is
// the limit in force each time.
func TestLimitMovesThroughLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var failing atomic.Bool
		svc := tower.ServiceFunc[int, int](func(ctx context.Context, req int) (int, error) {
			time.Sleep(10 * time.Millisecond)
			if failing.Load() {
				return 0, timeout.ErrElapsed
			}
			return req, nil
		})
		var counts metrics.Counts
		l := adaptive.New[int, int](svc, adaptive.AIMD(), adaptive.WithMetrics(&counts))
		if got := counts.Get(metrics.Limit); got != 20 {
			t.Errorf("sink's Limit at New: %d, want the initial 20", got)
		}
		ctx, stop := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for range 30 {
			wg.Go(func() {
				for ctx.Err() == nil {
					tower.Call(ctx, tower.Service[int, int](l), 0)
				}
			})
		}
		time.Sleep(5500 * time.Millisecond) // windows last a little over 1s: they end with a timed call
		if got := l.Limit(); got != 25 {
			t.Errorf("limit after 5 windows of light latency: %d, want 25", got)
		}
		if got := counts.Get(metrics.Limit); got != 25 {
			t.Errorf("sink's Limit after 5 windows: %d, want 25", got)
		}
		failing.Store(true)
		time.Sleep(2050 * time.Millisecond)
		if got := l.Limit(); got != 20 { // 25·0.9·0.9 = 20.25
			t.Errorf("limit after 2 windows of drops: %d, want 20", got)
		}
		if got := counts.Get(metrics.Limit); got != 20 {
			t.Errorf("sink's Limit after 2 windows of drops: %d, want 20", got)
		}
		stop()
		wg.Wait()
	})
}
