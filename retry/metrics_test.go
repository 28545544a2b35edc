package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towertest"
)

// retryAfter100ms retries every error after 100ms, up to 4 attempts.
var retryAfter100ms = retry.PolicyFunc[string, string](func(_ context.Context, a *attempt) (time.Duration, bool) {
	return 100 * time.Millisecond, a.Err != nil && a.N < 4
})

// retriedAt sleeps until at after start, lets the bubble settle, and fails
// t unless c counts want retries.
func retriedAt(t *testing.T, start time.Time, at time.Duration, c *metrics.Counts, want int64) {
	t.Helper()
	time.Sleep(at - time.Since(start))
	synctest.Wait()
	if got, w := c.Snapshot(), (metrics.Snapshot{Retried: want}); got != w {
		t.Errorf("at %v: got %v, want %v", time.Since(start), got, w)
	}
}

// Each retry is counted as it is sent, after its backoff and its Ready: not
// the first attempt, and not a retry still waiting for the inner service.
func TestMetricsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		mock, h := towertest.NewMock[string, string]()
		svc := retry.New[string, string](mock, retryAfter100ms, retry.WithMetrics(&c))
		start := time.Now()
		call := towertest.GoRequest(t.Context(), svc, "a")
		h.ExpectSettled(t, "a").Fail(errors.New("first"))
		retriedAt(t, start, 99*time.Millisecond, &c, 0)
		retriedAt(t, start, 100*time.Millisecond, &c, 1)
		h.Allow(0)
		h.ExpectSettled(t, "a").Fail(errors.New("second"))
		retriedAt(t, start, 250*time.Millisecond, &c, 1) // backoff over at 200ms, not ready
		h.AllowAll()
		retriedAt(t, start, 250*time.Millisecond, &c, 2)
		h.ExpectSettled(t, "a").Respond("A")
		call.ExpectValue(t, "A")
		if got, want := c.Snapshot(), (metrics.Snapshot{Retried: 2}); got != want {
			t.Errorf("got %v, want %v", got, want)
		}
	})
}

// A retry that is never sent is never counted: the caller gave up during
// the backoff, or the inner service broke before the retry's Ready.
func TestMetricsRetryNotSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c metrics.Counts
		mock, h := towertest.NewMock[string, string]()
		svc := retry.NewLayer[string, string](retryAfter100ms, retry.WithMetrics(&c)).Wrap(mock)

		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		call := towertest.GoRequest(ctx, svc, "a")
		h.ExpectSettled(t, "a").Fail(errors.New("first"))
		call.ExpectErrorMessage(t, context.DeadlineExceeded.Error())

		broken := errors.New("broken")
		call = towertest.GoRequest(t.Context(), svc, "b")
		h.ExpectSettled(t, "b").Fail(errors.New("first"))
		h.FailReady(broken)
		call.ExpectErrorMessage(t, broken.Error())
		if got := c.Snapshot(); got != (metrics.Snapshot{}) {
			t.Errorf("got %v, want {}", got)
		}
	})
}

// With a sink, a first attempt that needs no retry still allocates
// nothing.
func TestMetricsDoNotAllocate(t *testing.T) {
	var c metrics.Counts
	svc := retry.New[string, string](echo, retryAfter100ms, retry.WithMetrics(&c))
	ctx := t.Context()
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := tower.Call(ctx, svc, "a"); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("got %v allocations per request, want 0", allocs)
	}
}

func TestOptionPanics(t *testing.T) {
	tests := []struct {
		name, want string
		f          func()
	}{
		{"New", "retry.New: option 0 is nil", func() { retry.New[string, string](echo, retryAfter100ms, nil) }},
		{"NewLayer", "retry.NewLayer: option 1 is nil", func() {
			retry.NewLayer[string, string](retryAfter100ms, retry.WithMetrics(nil), nil)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}

// BenchmarkRetryMetrics is BenchmarkRetry with a sink, which a first
// attempt that succeeds does not touch.
func BenchmarkRetryMetrics(b *testing.B) {
	towertest.Bench(b, retry.New(echoInt, retry.NewPolicy[int, int](retry.AnyError), retry.WithMetrics(new(metrics.Counts))), 1)
}

// BenchmarkRetryOnceMetrics is BenchmarkRetryOnce reporting its retry to a
// metrics.Counts.
func BenchmarkRetryOnceMetrics(b *testing.B) {
	towertest.Bench(b, retry.New(failEveryOther(), retry.NewPolicy[int, int](retry.AnyError), retry.WithMetrics(new(metrics.Counts))), 1)
}
