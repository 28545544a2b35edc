package hedge_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// hedgedNow lets the bubble settle and fails t unless c counts want hedges.
func hedgedNow(t *testing.T, what string, c *metrics.Counts, want int64) {
	t.Helper()
	synctest.Wait()
	if got, w := c.Snapshot(), (metrics.Snapshot{Hedged: want}); got != w {
		t.Errorf("%s: got %v, want %v", what, got, w)
	}
}

// The hedge is counted as it is sent, at the delay (10ms, the p90 of
// towerLatencies), whichever leg then wins; an original that answers
// before the delay sends no hedge.
func TestMetricsHedged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		svc, h, _ := newHedge(hedge.WithMetrics(&c))

		call := towertest.GoRequest(t.Context(), svc, "fast")
		time.Sleep(5 * ms)
		h.ExpectSettled(t, "fast").Respond("fast-done")
		call.ExpectValue(t, "fast-done")
		call.ExpectElapsed(t, 5*ms)
		hedgedNow(t, "original answered at 5ms", &c, 0)

		call = towertest.GoRequest(t.Context(), svc, "slow")
		orig := h.ExpectSettled(t, "slow")
		time.Sleep(10*ms - 1)
		hedgedNow(t, "just before the delay", &c, 0)
		time.Sleep(time.Nanosecond)
		hedged := h.ExpectSettled(t, "slow")
		hedgedNow(t, "at the delay", &c, 1)
		hedged.Respond("hedge-done")
		call.ExpectValue(t, "hedge-done")
		call.ExpectElapsed(t, 10*ms)
		cancelled(t, orig, "the original")

		call = towertest.GoRequest(t.Context(), svc, "slow2")
		orig = h.ExpectSettled(t, "slow2")
		time.Sleep(10 * ms)
		hedged = h.ExpectSettled(t, "slow2")
		hedgedNow(t, "second hedge", &c, 2)
		orig.Respond("orig-done")
		call.ExpectValue(t, "orig-done")
		call.ExpectElapsed(t, 10*ms)
		cancelled(t, hedged, "the hedge")
		hedgedNow(t, "at the end", &c, 2)
	})
}

// A hedge that is never sent is never counted: the policy refuses it, the
// request cannot be cloned, or the inner service is not ready for the
// hedge before the original answers.
func TestMetricsHedgeNotSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		svc, h, _ := newHedge(hedge.WithMetrics(&c))
		for _, tt := range []struct {
			req   string
			allow int // grants the mock makes: -1 for all
		}{{notRetryable, -1}, {notClonable, -1}, {"unready", 1}} {
			if tt.allow >= 0 {
				h.Allow(tt.allow)
			}
			call := towertest.GoRequest(t.Context(), svc, tt.req)
			orig := h.ExpectSettled(t, tt.req)
			time.Sleep(20 * ms)
			h.ExpectNoneSettled(t)
			orig.Respond("done")
			call.ExpectValue(t, "done")
			call.ExpectElapsed(t, 20*ms)
		}
		h.ExpectIdle(t, 3)
		hedgedNow(t, "nothing sent", &c, 0)
	})
}

// With a sink, a call that cannot be hedged yet still allocates nothing.
func TestMetricsDoNotAllocate(t *testing.T) {
	var c metrics.Counts
	svc := hedge.New[int, int](echoInt, hedge.Idempotent[int]{}, 1<<30, 0.9, time.Minute, hedge.WithMetrics(&c))
	ctx := t.Context()
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := tower.Call(ctx, svc, 1); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("got %v allocations per request, want 0", allocs)
	}
}

// BenchmarkHedgeArmedMetrics is BenchmarkHedgeArmed with a sink, which a
// hedge never sent does not touch.
func BenchmarkHedgeArmedMetrics(b *testing.B) {
	towertest.Bench(b, hedge.MockLatencies(hedge.New[int, int](echoInt, hedge.Idempotent[int]{}, 1, 0.9, time.Minute, hedge.WithMetrics(new(metrics.Counts))), 1000), 1)
}

// BenchmarkHedgeSentMetrics is BenchmarkHedgeSent reporting its hedge to a
// metrics.Counts.
func BenchmarkHedgeSentMetrics(b *testing.B) {
	slow := tower.ServiceFunc[int, int](func(ctx context.Context, req int) (int, error) {
		if req == 1 { // the original
			<-ctx.Done()
			return 0, ctx.Err()
		}
		return req, nil
	})
	towertest.Bench(b, hedge.New[int, int](slow, hedgeAs(2), 0, 0.9, time.Minute,
		hedge.WithBudget(nil), hedge.WithMetrics(new(metrics.Counts))), 1)
}
