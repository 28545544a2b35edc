package hedge_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/towertest"
)

// No hedge is sent when the caller's deadline leaves less than the delay
// and the median latency: with tower's latencies, 10ms and 1ms. A deadline
// of 11ms leaves the original alone; one a nanosecond later gets its hedge
// at 10ms.
func TestHedgeDeadlineAware(t *testing.T) {
	for _, tt := range []struct {
		name     string
		deadline time.Duration
		hedged   bool
	}{
		{"TooLittleLeft", 11 * ms, false},
		{"JustEnough", 11*ms + 1, true},
		{"NoDeadline", 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				svc, h, _ := newHedge()
				ctx := t.Context()
				if tt.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.deadline)
					defer cancel()
				}
				c := towertest.GoRequest(ctx, svc, "orig")
				orig := h.ExpectSettled(t, "orig")
				time.Sleep(10 * ms)
				if !tt.hedged {
					h.ExpectNoneSettled(t)
					orig.Respond("orig-done")
					c.ExpectValue(t, "orig-done")
					h.ExpectIdle(t, 1)
					return
				}
				hedged := h.ExpectSettled(t, "orig")
				hedged.Respond("hedge-done")
				c.ExpectValue(t, "hedge-done")
				c.ExpectElapsed(t, 10*ms)
				cancelled(t, orig, "the original")
				h.ExpectIdle(t, 2)
			})
		})
	}
}

// The median a hedge is expected to take is read from the same histogram
// as the delay.
func TestRotatingMedian(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := hedge.NewRotating(time.Minute, 0.9)
		r.Preload(towerLatencies...)
		if got := r.Median(1); got != ms {
			t.Errorf("median of tower's latencies: got %v, want 1ms", got)
		}
		r = hedge.NewRotating(time.Minute, 0.9)
		r.Preload(3, 5, 7, 9, 40)
		if got := r.Median(1); got != 7*ms {
			t.Errorf("median of 3 5 7 9 40: got %v, want 7ms", got)
		}
	})
}
