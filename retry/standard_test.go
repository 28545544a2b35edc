package retry_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towertest"
)

// countingBudget counts deposits and withdrawals, and grants the first
// allow withdrawals.
type countingBudget struct {
	mu                    sync.Mutex
	deposits, withdrawals int
	allow                 int
}

func (b *countingBudget) Deposit() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.deposits++
}

func (b *countingBudget) Withdraw() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.withdrawals++
	return b.withdrawals <= b.allow
}

func (b *countingBudget) check(t *testing.T, deposits, withdrawals int) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.deposits != deposits || b.withdrawals != withdrawals {
		t.Errorf("got %d deposits and %d withdrawals, want %d and %d", b.deposits, b.withdrawals, deposits, withdrawals)
	}
}

// fails answers the next n requests, all "hello", with errors "fail 1",
// "fail 2"..., then the next one with "world" if answer is set.
func fails(t *testing.T, h *handle, n int, answer bool) {
	t.Helper()
	for i := range n {
		h.ExpectSettled(t, "hello").Fail(fmt.Errorf("fail %d", i+1))
	}
	if answer {
		h.ExpectSettled(t, "hello").Respond("world")
	}
}

func TestStandardPolicyAttempts(t *testing.T) {
	tests := []struct {
		name    string
		opts    []retry.PolicyOption
		fails   int  // errors the inner service answers first
		answer  bool // whether it then answers "world"
		wantErr string
		calls   int
	}{
		{"SuccessIsNotRetried", nil, 0, true, "", 1},
		{"ErrorThenSuccess", nil, 1, true, "", 2},
		{"DefaultThreeAttempts", nil, 3, false, "fail 3", 3},
		{"MaxAttempts1", []retry.PolicyOption{retry.WithMaxAttempts(1)}, 1, false, "fail 1", 1},
		{"MaxAttempts5", []retry.PolicyOption{retry.WithMaxAttempts(5)}, 4, true, "", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				svc, h := newRetry(retry.NewPolicy[string, string](retry.AnyError, tt.opts...))
				c := towertest.GoRequest(t.Context(), svc, "hello")
				fails(t, h, tt.fails, tt.answer)
				if tt.wantErr != "" {
					c.ExpectErrorMessage(t, tt.wantErr)
				} else {
					c.ExpectValue(t, "world")
				}
				h.ExpectIdle(t, tt.calls)
			})
		})
	}
}

// The classifier decides what is retried: here a "busy" response, and not
// an error.
func TestStandardPolicyClassifier(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		busy := func(res string, err error) bool { return err == nil && res == "busy" }
		svc, h := newRetry(retry.NewPolicy[string, string](busy))
		c := towertest.GoRequest(t.Context(), svc, "hello")
		h.ExpectSettled(t, "hello").Respond("busy")
		h.ExpectSettled(t, "hello").Fail(errors.New("no"))
		c.ExpectErrorMessage(t, "no")
		h.ExpectIdle(t, 2)
	})
}

// A budget that has run out returns the last result, error or response,
// not an error of its own.
func TestStandardPolicyBudgetExhaustedReturnsLastResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		empty := retry.NewTPSBudget(time.Second, 0, 0) // no reserve, deposits earn nothing
		svc, h := newRetry(retry.NewPolicy[string, string](retry.AnyError, retry.WithBudget(empty)))
		c := towertest.GoRequest(t.Context(), svc, "hello")
		h.ExpectSettled(t, "hello").Fail(errors.New("fail 1"))
		c.ExpectErrorMessage(t, "fail 1")
		h.ExpectIdle(t, 1)

		busy := func(res string, err error) bool { return res == "busy" }
		svc, h = newRetry(retry.NewPolicy[string, string](busy, retry.WithBudget(empty)))
		c = towertest.GoRequest(t.Context(), svc, "hello")
		h.ExpectSettled(t, "hello").Respond("busy")
		c.ExpectValue(t, "busy")
		h.ExpectIdle(t, 1)
	})
}

// A request deposits once, at its first attempt, whatever its result, and
// each retry withdraws; a refused withdrawal ends the retries.
func TestStandardPolicyBudgetAccounting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &countingBudget{allow: 1}
		svc, h := newRetry(retry.NewPolicy[string, string](retry.AnyError, retry.WithMaxAttempts(10), retry.WithBudget(b)))
		c := towertest.GoRequest(t.Context(), svc, "hello")
		fails(t, h, 2, false)
		c.ExpectErrorMessage(t, "fail 2")
		b.check(t, 1, 2)

		c = towertest.GoRequest(t.Context(), svc, "hello")
		fails(t, h, 0, true)
		c.ExpectValue(t, "world")
		b.check(t, 2, 2) // a success deposits and withdraws nothing
	})
}

// Running out of attempts does not touch the budget.
func TestStandardPolicyMaxAttemptsBeforeBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &countingBudget{allow: 10}
		svc, h := newRetry(retry.NewPolicy[string, string](retry.AnyError, retry.WithMaxAttempts(2), retry.WithBudget(b)))
		c := towertest.GoRequest(t.Context(), svc, "hello")
		fails(t, h, 2, false)
		c.ExpectErrorMessage(t, "fail 2")
		b.check(t, 1, 1)
	})
}

// The backoff's delays, exactly: 10ms after the first attempt, 20ms after
// the second.
func TestStandardPolicyBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bo := retry.NewExponentialBackoff(10*time.Millisecond, time.Second, 0)
		svc, h := newRetry(retry.NewPolicy[string, string](retry.AnyError, retry.WithBackoff(bo)))
		start := time.Now()
		c := towertest.GoRequest(t.Context(), svc, "hello")
		for i, want := range []time.Duration{0, 10 * time.Millisecond, 30 * time.Millisecond} {
			r, err := h.Next(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got := time.Since(start); got != want {
				t.Errorf("attempt %d sent at %v, want %v", i+1, got, want)
			}
			r.Fail(fmt.Errorf("fail %d", i+1))
		}
		c.ExpectErrorMessage(t, "fail 3")
		c.ExpectElapsed(t, 30*time.Millisecond)
	})
}

// A retry whose backoff would reach the caller's deadline is not made: the
// caller gets the last error at once, not a context error at the deadline,
// and the budget is not drawn on.
func TestStandardPolicyDeadlineTooClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bo := retry.NewExponentialBackoff(10*time.Millisecond, time.Second, 0)
		b := &countingBudget{allow: 10}
		svc, h := newRetry(retry.NewPolicy[string, string](retry.AnyError, retry.WithBackoff(bo), retry.WithBudget(b)))
		ctx, cancel := context.WithTimeout(t.Context(), 25*time.Millisecond)
		defer cancel()
		c := towertest.GoRequest(ctx, svc, "hello")
		h.ExpectSettled(t, "hello").Fail(errors.New("fail 1")) // at 0ms; retry at 10ms
		time.Sleep(10 * time.Millisecond)
		h.ExpectSettled(t, "hello").Fail(errors.New("fail 2")) // at 10ms; a retry would be at 30ms
		c.ExpectErrorMessage(t, "fail 2")
		c.ExpectElapsed(t, 10*time.Millisecond)
		b.check(t, 1, 1)
	})
}

// A result that comes back after the caller's ctx ended is not retried,
// and the budget is not drawn on.
func TestStandardPolicyContextDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &countingBudget{allow: 10}
		svc, h := newRetry(retry.NewPolicy[string, string](retry.AnyError, retry.WithBudget(b)))
		ctx, cancel := context.WithCancel(t.Context())
		c := towertest.GoRequest(ctx, svc, "hello")
		h.ExpectSettled(t, "hello")
		cancel()
		_, err := c.Wait()
		if err != context.Canceled {
			t.Errorf("Call: got %v, want %v", err, context.Canceled)
		}
		h.ExpectIdle(t, 1)
		b.check(t, 1, 0)
	})
}

func TestStandardPolicyBadInputPanics(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    func()
		want string
	}{
		{"MaxAttempts0", func() { retry.WithMaxAttempts(0) }, "retry.WithMaxAttempts: n must be at least 1, got 0"},
		{"NilBackoff", func() { retry.WithBackoff(nil) }, "retry.WithBackoff: nil Backoff"},
		{"NilBudget", func() { retry.WithBudget(nil) }, "retry.WithBudget: nil Budget"},
		{"TypedNilBackoff", func() { retry.WithBackoff((*retry.ExponentialBackoff)(nil)) }, "retry.WithBackoff: nil Backoff"},
		{"TypedNilBudget", func() { retry.WithBudget((*retry.TPSBudget)(nil)) }, "retry.WithBudget: nil Budget"},
		{"NilOption", func() { retry.NewPolicy[string, string](retry.AnyError, retry.WithMaxAttempts(2), nil) }, "retry.NewPolicy: option 1 is nil"},
		{"NilRetryable", func() { retry.NewPolicy[string, string](nil, retry.WithMaxAttempts(2)) }, "retry.NewPolicy: nil retryable"},
	} {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}
