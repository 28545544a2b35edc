package towerredis

// In-package: it checks the unexported budget and sleepUntil on testing/synctest's clock.

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerredis/internal/mono"
)

// A caller without a deadline reserves up to max(burst*interval,
// MinReserve) ahead; one with a deadline, up to the time left to it, at
// most that; one past its deadline, nothing.
func TestBucketBudget(t *testing.T) {
	c := newClient(t, closedPort(t)) // never dialled
	for _, tt := range []struct {
		num      int
		per      time.Duration
		burst    int
		deadline time.Duration // from now; 0 is none
		want     time.Duration
	}{
		{1, time.Second, 1, 0, time.Second},                                  // span 1s
		{10, time.Second, 5, 0, MinReserve},                                  // span 500ms: MinReserve
		{1, time.Second, 5, 0, 5 * time.Second},                              // span 5s
		{3, time.Second, 10, 0, 3_333_340 * time.Microsecond},                // 10 tokens of 333,334µs
		{1, time.Second, 5, 2 * time.Second, 2 * time.Second},                // the deadline first
		{1, time.Second, 5, 5*time.Second + 1, 5 * time.Second},              // the span first
		{10, time.Second, 5, 1500 * time.Millisecond, MinReserve},            // MinReserve first
		{10, time.Second, 5, 700 * time.Millisecond, 700 * time.Millisecond}, // the deadline, below MinReserve
		{1, time.Second, 5, -time.Second, 0},                                 // past the deadline
	} {
		b := newGCRA("test", c, "budget", tt.num, tt.per, tt.burst, bucketOptions("test", nil))
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			if tt.deadline != 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, time.Now().Add(tt.deadline))
				defer cancel()
			}
			if got := b.budget(ctx); got != tt.want {
				t.Errorf("%d per %v, burst %d, deadline in %v: budget %v, want %v", tt.num, tt.per, tt.burst, tt.deadline, got, tt.want)
			}
		})
	}
}

// sleepUntil returns at once, reporting nothing to the sink, for an
// instant already come (due now included); otherwise it reports Waiting
// and sleeps until the instant, or until ctx ends.
func TestSleepUntil(t *testing.T) {
	for _, tt := range []struct {
		due     time.Duration // from now
		done    bool          // ctx already ended
		want    bool
		waiting int64         // Waiting reported
		slept   time.Duration // fake time elapsed
	}{
		{-time.Second, false, true, 0, 0},
		{-1, false, true, 0, 0},
		{0, false, true, 0, 0},
		{0, true, true, 0, 0}, // due now: the caller's, even with ctx done
		{1, false, true, 1, 1},
		{3 * time.Second, false, true, 1, 3 * time.Second},
		{3 * time.Second, true, false, 1, 0},
	} {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.done {
				cancel()
			}
			var (
				counts metrics.Counts
				w      watch
			)
			start := mono.Now()
			got := sleepUntil(ctx, start+tt.due, &w, &counts, nothing)
			slept := mono.Now() - start
			if got != tt.want || counts.Get(metrics.Waiting) != tt.waiting || slept != tt.slept {
				t.Errorf("due in %v, ctx done %v: got %v, Waiting %d, slept %v; want %v, %d, %v",
					tt.due, tt.done, got, counts.Get(metrics.Waiting), slept, tt.want, tt.waiting, tt.slept)
			}
			w.done(&counts, nothing)
			if n := counts.Get(metrics.Waiting); n != 0 {
				t.Errorf("due in %v: Waiting = %d after done, want 0", tt.due, n)
			}
		})
	}
}
