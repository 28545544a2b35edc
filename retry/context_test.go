package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/retry"
)

// The ctx is done before Call: the first attempt is not sent, and the
// permit is given back.
func TestRetryNoFirstAttemptAfterContextDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h := newRetry(retryErrors)
		p, err := svc.Ready(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := p.Call(ctx, "hello"); err != context.Canceled {
			t.Errorf("Call: got %v, want %v", err, context.Canceled)
		}
		checkCalls(t, h, 0)
	})
}

// The ctx ends during a backoff: the call ends then, with ctx's error, and
// no further attempt is sent.
func TestRetryContextEndsDuringBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h := newRetry(retry.PolicyFunc[string, string](func(context.Context, *attempt) (time.Duration, bool) {
			return 50 * time.Millisecond, true
		}))
		ctx, cancel := context.WithTimeout(t.Context(), 40*time.Millisecond)
		defer cancel()
		c := goCall(ctx, svc, "hello")
		time.Sleep(10 * time.Millisecond)
		take(t, h, "hello").Fail(errors.New("retry me"))
		_, err := c.Wait()
		if err != context.DeadlineExceeded || c.at != 40*time.Millisecond {
			t.Errorf("Call: got %v at %v, want %v at 40ms", err, c.at, context.DeadlineExceeded)
		}
		time.Sleep(100 * time.Millisecond)
		checkCalls(t, h, 1)
	})
}

// A backoff that ends at the very instant of the deadline starts no
// attempt.
func TestRetryBackoffEndsAtDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h := newRetry(retry.PolicyFunc[string, string](func(context.Context, *attempt) (time.Duration, bool) {
			return 30 * time.Millisecond, true
		}))
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
		defer cancel()
		c := goCall(ctx, svc, "hello")
		take(t, h, "hello").Fail(errors.New("retry me"))
		_, err := c.Wait()
		if err != context.DeadlineExceeded || c.at != 30*time.Millisecond {
			t.Errorf("Call: got %v at %v, want %v at 30ms", err, c.at, context.DeadlineExceeded)
		}
		checkCalls(t, h, 1)
	})
}

// A retry waits for the inner service's readiness before it is sent, and
// holds nothing while it waits; if ctx ends then, the call ends with ctx's
// error.
func TestRetryWaitsForReadiness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h := newRetry(retryErrors)
		h.Allow(1)
		start := time.Now()
		c := goCall(t.Context(), svc, "hello")
		take(t, h, "hello").Fail(errors.New("retry me"))
		noRequest(t, h) // the retry waits in Ready
		time.Sleep(30 * time.Millisecond)
		h.Allow(1)
		r := take(t, h, "hello")
		if got := time.Since(start); got != 30*time.Millisecond {
			t.Errorf("retry sent at %v, want 30ms", got)
		}
		r.Respond("world")
		c.expect(t, "world")
		checkCalls(t, h, 2)

		// Now the ctx ends while the retry waits.
		h.Allow(1)
		ctx, cancel := context.WithCancel(t.Context())
		c = goCall(ctx, svc, "again")
		take(t, h, "again").Fail(errors.New("retry me"))
		c.pending(t)
		if n := h.Outstanding(); n != 0 {
			t.Errorf("a retry waiting for readiness holds %d reservations, want 0", n)
		}
		cancel()
		_, err := c.Wait()
		if err != context.Canceled {
			t.Errorf("Call: got %v, want %v", err, context.Canceled)
		}
		checkCalls(t, h, 3)
	})
}
