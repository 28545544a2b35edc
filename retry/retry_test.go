package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towertest"
)

// The policies of tower's tests/retry/main.rs. tower clones a policy for
// each request; the ones with a counter are SessionPolicies here.

// retryErrors retries every error (tower: RetryErrors).
var retryErrors = retry.PolicyFunc[string, string](func(_ context.Context, a *attempt) (time.Duration, bool) {
	return 0, a.Err != nil
})

// limitPolicy retries errors while its counter, per request, is above zero
// (tower: Limit).
type limitPolicy struct{ left int }

func (p *limitPolicy) Clone(req string) (string, bool) { return req, true }

func (p *limitPolicy) Retry(_ context.Context, a *attempt) (time.Duration, bool) {
	if a.Err != nil && p.left > 0 {
		p.left--
		return 0, true
	}
	return 0, false
}

// limitSessions gives each request a limitPolicy of its own.
type limitSessions struct {
	limitPolicy
	n int
}

func (s *limitSessions) NewSession() retry.Policy[string, string] { return &limitPolicy{left: s.n} }

// unlessErr retries every error but the one whose message is msg (tower:
// UnlessErr).
func unlessErr(msg string) retry.PolicyFunc[string, string] {
	return func(_ context.Context, a *attempt) (time.Duration, bool) {
		return 0, a.Err != nil && a.Err.Error() != msg
	}
}

// cannotClone cannot copy any request; its Retry must never be called
// (tower: CannotClone).
type cannotClone struct{ t *testing.T }

func (cannotClone) Clone(string) (string, bool) { return "", false }

func (p cannotClone) Retry(context.Context, *attempt) (time.Duration, bool) {
	p.t.Error("Retry called for a request that could not be cloned")
	return 0, false
}

// mutatingPolicy changes the request to "retrying" for each retry, and the
// result to an error when its retries, per request, run out (tower:
// MutatingPolicy).
type mutatingPolicy struct{ remaining int }

func (p *mutatingPolicy) Clone(req string) (string, bool) { return req, true }

func (p *mutatingPolicy) Retry(_ context.Context, a *attempt) (time.Duration, bool) {
	if p.remaining == 0 {
		a.Res, a.Err = "", errors.New("out of retries")
		return 0, false
	}
	a.Req = "retrying"
	p.remaining--
	return 0, true
}

type mutatingSessions struct{ mutatingPolicy }

func (*mutatingSessions) NewSession() retry.Policy[string, string] {
	return &mutatingPolicy{remaining: 2}
}

// tower: retry_errors.
func TestRetryErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h := newRetry(retryErrors)
		c := towertest.GoRequest(t.Context(), svc, "hello")
		h.ExpectSettled(t, "hello").Fail(errors.New("retry me"))
		c.ExpectPending(t)
		h.ExpectSettled(t, "hello").Respond("world")
		c.ExpectValue(t, "world")
		h.ExpectIdle(t, 2)
	})
}

// tower: retry_limit. Two retries, then the third error is returned. A
// second request gets two retries of its own: the counter is per session.
func TestRetryLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h := newRetry(&limitSessions{n: 2})
		for round := range 2 {
			c := towertest.GoRequest(t.Context(), svc, "hello")
			h.ExpectSettled(t, "hello").Fail(errors.New("retry 1"))
			c.ExpectPending(t)
			h.ExpectSettled(t, "hello").Fail(errors.New("retry 2"))
			c.ExpectPending(t)
			h.ExpectSettled(t, "hello").Fail(errors.New("retry 3"))
			c.ExpectErrorMessage(t, "retry 3")
			h.ExpectIdle(t, 3*(round+1))
		}
	})
}

// The same limit without a session: the attempt number counts.
func TestRetryLimitByAttemptNumber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h := newRetry(retry.PolicyFunc[string, string](func(_ context.Context, a *attempt) (time.Duration, bool) {
			return 0, a.Err != nil && a.N <= 2
		}))
		c := towertest.GoRequest(t.Context(), svc, "hello")
		h.ExpectSettled(t, "hello").Fail(errors.New("retry 1"))
		h.ExpectSettled(t, "hello").Fail(errors.New("retry 2"))
		h.ExpectSettled(t, "hello").Fail(errors.New("retry 3"))
		c.ExpectErrorMessage(t, "retry 3")
		h.ExpectIdle(t, 3)
	})
}

// tower: retry_error_inspection.
func TestRetryErrorInspection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h := newRetry(unlessErr("reject"))
		c := towertest.GoRequest(t.Context(), svc, "hello")
		h.ExpectSettled(t, "hello").Fail(errors.New("retry 1"))
		c.ExpectPending(t)
		h.ExpectSettled(t, "hello").Fail(errors.New("reject"))
		c.ExpectErrorMessage(t, "reject")
		h.ExpectIdle(t, 2)
	})
}

// tower: retry_cannot_clone_request. The error is returned as it is, and
// Retry is never asked.
func TestRetryCannotCloneRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h := newRetry(cannotClone{t})
		c := towertest.GoRequest(t.Context(), svc, "hello")
		h.ExpectSettled(t, "hello").Fail(errors.New("retry 1"))
		c.ExpectErrorMessage(t, "retry 1")
		h.ExpectIdle(t, 1)
	})
}

// tower: success_with_cannot_clone.
func TestRetrySuccessWithCannotClone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h := newRetry(cannotClone{t})
		c := towertest.GoRequest(t.Context(), svc, "hello")
		h.ExpectSettled(t, "hello").Respond("world")
		c.ExpectValue(t, "world")
		h.ExpectIdle(t, 1)
	})
}

// tower: retry_mutating_policy. A success is retried too, with the request
// the policy changed; when the retries run out, the policy turns the
// result into an error.
func TestRetryMutatingPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h := newRetry(&mutatingSessions{})
		c := towertest.GoRequest(t.Context(), svc, "hello")
		h.ExpectSettled(t, "hello").Respond("world")
		c.ExpectPending(t)
		h.ExpectSettled(t, "retrying").Respond("world")
		c.ExpectPending(t)
		h.ExpectSettled(t, "retrying").Respond("world")
		c.ExpectErrorMessage(t, "out of retries")
		h.ExpectIdle(t, 3)
	})
}

// Each retry waits the policy's backoff, exactly.
func TestRetryBackoffTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h := newRetry(retry.PolicyFunc[string, string](func(_ context.Context, a *attempt) (time.Duration, bool) {
			return time.Duration(a.N) * 20 * time.Millisecond, a.Err != nil
		}))
		start := time.Now()
		c := towertest.GoRequest(t.Context(), svc, "hello")
		for i, want := range []time.Duration{0, 20 * time.Millisecond, 60 * time.Millisecond} {
			r, err := h.Next(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got := time.Since(start); got != want {
				t.Errorf("attempt %d arrived at %v, want %v", i+1, got, want)
			}
			if i < 2 {
				r.Fail(errors.New("again"))
			} else {
				r.Respond("world")
			}
		}
		c.ExpectValue(t, "world")
		c.ExpectElapsed(t, 60*time.Millisecond)
	})
}

// The inner service breaks while a retry waits for it: its error is the
// call's.
func TestRetryInnerBreaksBeforeRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h := newRetry(retryErrors)
		h.Allow(1)
		c := towertest.GoRequest(t.Context(), svc, "hello")
		h.ExpectSettled(t, "hello").Fail(errors.New("retry me"))
		broken := errors.New("broken")
		h.FailReady(broken)
		_, err := c.Wait()
		if err != broken {
			t.Errorf("Call: got %v, want %v", err, broken)
		}
		h.ExpectIdle(t, 1)
	})
}

// panicClone's Clone panics.
type panicClone struct {
	retry.PolicyFunc[string, string]
}

func (panicClone) Clone(string) (string, bool) { panic("clone exploded") }

// A policy that panics before the first attempt gives the permit back.
func TestRetryPanicBeforeFirstAttemptReleasesPermit(t *testing.T) {
	svc, h := newRetry(panicClone{})
	p := towertest.MustReady(t, svc)
	towertest.Panics(t, "clone exploded", func() { p.Call(t.Context(), "hello") })
	if n := h.Outstanding(); n != 0 {
		t.Errorf("inner service has %d reservations outstanding, want 0", n)
	}
}

// Retry's Ready is the inner service's: it waits for it, passes its error
// on unchanged, and a permit released unused gives it back.
func TestRetryReadyPassesThrough(t *testing.T) {
	svc, h := newRetry(retryErrors)
	h.Allow(1)
	p, ok, err := tower.ReadyNow[string, string](svc)
	if !ok || err != nil {
		t.Fatalf("ReadyNow: got %v, %v; want ready", ok, err)
	}
	if _, ok, _ := tower.ReadyNow[string, string](svc); ok {
		t.Fatal("ReadyNow with the inner service's only permit taken: got ready, want not ready")
	}
	p.Release()
	if n := h.Outstanding(); n != 0 {
		t.Errorf("inner service has %d reservations outstanding, want 0", n)
	}
	broken := errors.New("broken")
	h.FailReady(broken)
	if _, err := svc.Ready(t.Context()); err != broken {
		t.Errorf("Ready: got %v, want %v", err, broken)
	}
}

func TestRetryBadInputPanics(t *testing.T) {
	mock, _ := towertest.NewMock[string, string]()
	for _, tt := range []struct {
		name string
		f    func()
		want string
	}{
		{"NewNilInner", func() { retry.New[string, string](nil, retryErrors) }, "retry.New: nil inner service"},
		{"NewNilPolicy", func() { retry.New[string, string](mock, nil) }, "retry.New: nil policy"},
		{"NewLayerNilPolicy", func() { retry.NewLayer[string, string](nil) }, "retry.NewLayer: nil policy"},
		{"NewTypedNilInner", func() { retry.New[string, string]((*towertest.Mock[string, string])(nil), retryErrors) }, "retry.New: nil inner service"},
		{"NewTypedNilPolicy", func() { retry.New[string, string](mock, (*retry.StandardPolicy[string, string])(nil)) }, "retry.New: nil policy"},
		{"NewNilPolicyFunc", func() { retry.New[string, string](mock, retry.PolicyFunc[string, string](nil)) }, "retry.New: nil policy"},
		{"NewLayerTypedNilPolicy", func() { retry.NewLayer[string, string]((*retry.StandardPolicy[string, string])(nil)) }, "retry.NewLayer: nil policy"},
		{"NewLayerTypedNilInner", func() {
			retry.NewLayer[string, string](retryErrors).Wrap((*towertest.Mock[string, string])(nil))
		}, "retry.New: nil inner service"},
	} {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}

// raceEnabled is set by race_test.go when the race detector is on.
var raceEnabled bool

// A first attempt that succeeds allocates nothing: the permit's record and
// the Attempt the policy sees both come from pools.
func TestRetryFirstAttemptDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	for _, tt := range []struct {
		name   string
		policy retry.Policy[string, string]
	}{
		{"StandardPolicy", retry.NewPolicy[string, string](retry.AnyError)},
		{"StandardPolicyWithBudget", retry.NewPolicy[string, string](retry.AnyError, retry.WithBudget(retry.NewTPSBudget(time.Second, 1, 1)))},
		{"PolicyFunc", retryErrors},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc := retry.New[string, string](echo, tt.policy)
			ctx := context.Background()
			allocs := testing.AllocsPerRun(100, func() {
				if res, err := tower.Call[string, string](ctx, svc, "hello"); res != "hello" || err != nil {
					panic(err)
				}
			})
			if allocs != 0 {
				t.Errorf("got %v allocations per request, want 0", allocs)
			}
		})
	}
}
