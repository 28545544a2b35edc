package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towertest"
)

// The ctx is done before Call: the first attempt is not sent, and the
// permit is given back.
func TestRetryNoFirstAttemptAfterContextDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h := newRetry(retryErrors)
		p := towertest.MustReady(t, svc)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := p.Call(ctx, "hello"); err != context.Canceled {
			t.Errorf("Call: got %v, want %v", err, context.Canceled)
		}
		h.ExpectIdle(t, 0)
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
		c := towertest.GoRequest(ctx, svc, "hello")
		time.Sleep(10 * time.Millisecond)
		h.ExpectSettled(t, "hello").Fail(errors.New("retry me"))
		_, err := c.Wait()
		if err != context.DeadlineExceeded || c.Elapsed() != 40*time.Millisecond {
			t.Errorf("Call: got %v at %v, want %v at 40ms", err, c.Elapsed(), context.DeadlineExceeded)
		}
		time.Sleep(100 * time.Millisecond)
		h.ExpectIdle(t, 1)
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
		c := towertest.GoRequest(ctx, svc, "hello")
		h.ExpectSettled(t, "hello").Fail(errors.New("retry me"))
		_, err := c.Wait()
		if err != context.DeadlineExceeded || c.Elapsed() != 30*time.Millisecond {
			t.Errorf("Call: got %v at %v, want %v at 30ms", err, c.Elapsed(), context.DeadlineExceeded)
		}
		h.ExpectIdle(t, 1)
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
		c := towertest.GoRequest(t.Context(), svc, "hello")
		h.ExpectSettled(t, "hello").Fail(errors.New("retry me"))
		h.ExpectNoneSettled(t) // the retry waits in Ready
		time.Sleep(30 * time.Millisecond)
		h.Allow(1)
		r := h.ExpectSettled(t, "hello")
		if got := time.Since(start); got != 30*time.Millisecond {
			t.Errorf("retry sent at %v, want 30ms", got)
		}
		r.Respond("world")
		c.ExpectValue(t, "world")
		h.ExpectIdle(t, 2)

		// Now the ctx ends while the retry waits.
		h.Allow(1)
		ctx, cancel := context.WithCancel(t.Context())
		c = towertest.GoRequest(ctx, svc, "again")
		h.ExpectSettled(t, "again").Fail(errors.New("retry me"))
		c.ExpectPending(t)
		if n := h.Outstanding(); n != 0 {
			t.Errorf("a retry waiting for readiness holds %d reservations, want 0", n)
		}
		cancel()
		_, err := c.Wait()
		if err != context.Canceled {
			t.Errorf("Call: got %v, want %v", err, context.Canceled)
		}
		h.ExpectIdle(t, 3)
	})
}
