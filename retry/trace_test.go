package retry_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towertest"
)

// backoff10ms retries every error, up to 3 attempts in all, after 10ms.
var backoff10ms = retry.PolicyFunc[string, string](func(_ context.Context, a *attempt) (time.Duration, bool) {
	return 10 * time.Millisecond, a.Err != nil && a.N < 3
})

// wantTrace fails t unless rec recorded want.
func wantTrace(t *testing.T, rec *towertest.TraceRecorder, want ...string) {
	t.Helper()
	synctest.Wait()
	if got := rec.Lines(); !slices.Equal(got, want) {
		t.Errorf("got trace\n%q\nwant\n%q", got, want)
	}
}

// expectAttempt takes the next request from h, and fails t unless it is
// req, sent under the context of attempt n of rec's (0: none).
func expectAttempt(t *testing.T, h *handle, rec *towertest.TraceRecorder, req string, n int) *towertest.Request[string, string] {
	t.Helper()
	r := h.ExpectSettled(t, req)
	got := 0
	if a, ok := rec.Attempt(r.Context()); ok {
		got = a.N
	}
	if got != n {
		t.Errorf("request %q sent under the context of attempt %d, want %d", req, got, n)
	}
	return r
}

// Each retry is one attempt: it starts when the policy asks for it, with
// the previous attempt's error as its cause, spans its backoff, Ready and
// Call, which run under its context, and ends with its result. The first
// attempt is not reported.
func TestTraceRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := towertest.NewTraceRecorder()
		r, h := newRetry(backoff10ms)
		call := towertest.GoRequest(metrics.WithTracer(t.Context(), rec), r, "hello")
		expectAttempt(t, h, rec, "hello", 0).Fail(errors.New("unavailable"))
		time.Sleep(10 * time.Millisecond)
		r2 := expectAttempt(t, h, rec, "hello", 2)
		time.Sleep(5 * time.Millisecond)
		r2.Fail(errors.New("overloaded"))
		time.Sleep(10 * time.Millisecond)
		expectAttempt(t, h, rec, "hello", 3).Respond("world")
		call.ExpectValue(t, "world")
		call.ExpectElapsed(t, 25*time.Millisecond)
		wantTrace(t, rec,
			"retry 2 start 0s delay=10ms cause=unavailable",
			"retry 2 end 15ms err=overloaded",
			"retry 3 start 15ms delay=10ms cause=overloaded",
			"retry 3 end 25ms",
		)
	})
}

// A request that is not retried reports nothing; one whose caller gives up
// during a retry's backoff ends that retry with its context's error.
func TestTraceNoRetryAndGiveUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := towertest.NewTraceRecorder()
		r, h := newRetry(backoff10ms)
		ctx := metrics.WithTracer(t.Context(), rec)
		call := towertest.GoRequest(ctx, r, "once")
		h.ExpectSettled(t, "once").Respond("ok")
		call.ExpectValue(t, "ok")
		wantTrace(t, rec)

		ctx, cancel := context.WithTimeout(ctx, 4*time.Millisecond)
		defer cancel()
		call = towertest.GoRequest(ctx, r, "gives up")
		h.ExpectSettled(t, "gives up").Fail(errors.New("unavailable"))
		call.ExpectError(t, context.DeadlineExceeded)
		call.ExpectElapsed(t, 4*time.Millisecond)
		wantTrace(t, rec,
			"retry 2 start 0s delay=10ms cause=unavailable",
			"retry 2 end 4ms err=context deadline exceeded",
		)
		h.ExpectIdle(t, 2)
	})
}

// A panic that goes through a retry ends its attempt with an error that
// says so, before it goes on up to the caller.
func TestTracePanicThroughRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := towertest.NewTraceRecorder()
		r, h := newRetry(backoff10ms)
		ctx := metrics.WithTracer(t.Context(), rec)
		o := towertest.Go(func() (string, error) {
			defer func() {
				if v := recover(); v != "boom" {
					t.Errorf("the caller's goroutine panicked with %v, want boom", v)
				}
			}()
			return tower.Call[string, string](ctx, r, "hello")
		})
		h.ExpectSettled(t, "hello").Fail(errors.New("unavailable"))
		time.Sleep(10 * time.Millisecond)
		h.ExpectSettled(t, "hello").Panic("boom")
		o.Wait()
		wantTrace(t, rec,
			"retry 2 start 0s delay=10ms cause=unavailable",
			"retry 2 end 10ms err=retry: a panic went through the attempt",
		)
		h.ExpectIdle(t, 2)
	})
}

// A request that is not retried does not look for a Tracer, and allocates
// nothing, with a Tracer in its context as without.
func TestTraceFirstAttemptDoesNotAllocate(t *testing.T) {
	r := retry.New[string, string](echo, backoff10ms)
	ctx := metrics.WithTracer(t.Context(), towertest.NewTraceRecorder())
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := tower.Call[string, string](ctx, r, "hello"); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("got %v allocations per request, want 0", allocs)
	}
}
