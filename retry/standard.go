package retry

import (
	"context"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
)

// StandardPolicy is a ready-made [Policy] for requests that are values.
// After a request's first attempt it deposits into its budget, if any;
// then it returns the result, in this order, if retryable does not want
// it retried, if the maximum number of attempts is reached or ctx is done,
// if the wait (the backoff's delay, raised to a [WithPushback] pushback)
// plus [StandardPolicy.Expected] would reach ctx's deadline, or if the
// budget refuses a withdrawal. Otherwise it retries after the wait.
//
// A StandardPolicy keeps no per-request state and is safe for concurrent
// use. Its zero value is not usable; build one with [NewPolicy].
type StandardPolicy[Req, Res any] struct {
	policyOptions
	retryable func(res Res, err error) bool
	after     func(res Res, err error) (time.Duration, bool) // policyOptions.pushback; nil: none
	expected  atomic.Int64                                   // nanoseconds: see Expected
}

// A PolicyOption configures a [StandardPolicy].
type PolicyOption func(*policyOptions)

type policyOptions struct {
	maxAttempts int
	backoff     Backoff
	budget      Budget
	pushback    any // a func(Res, error) (time.Duration, bool), checked by NewPolicy
	maxPushback time.Duration
}

// WithMaxAttempts sets how many times in all a request may be tried, the
// first try included. The default is 3. It panics if n is less than 1.
func WithMaxAttempts(n int) PolicyOption {
	option.PanicIf(n < 1, "retry.WithMaxAttempts: n must be at least 1, got %d", n)
	return func(o *policyOptions) { o.maxAttempts = n }
}

// WithBackoff sets how long to wait before each retry. The default is not
// to wait. It panics if b is nil, or a typed nil.
func WithBackoff(b Backoff) PolicyOption {
	option.PanicIf(isnil.Is(b), "retry.WithBackoff: nil Backoff")
	return func(o *policyOptions) { o.backoff = b }
}

// WithBudget makes retries draw on b, which may be shared (see [Budget]).
// The default is no budget. It panics if b is nil, or a typed nil.
func WithBudget(b Budget) PolicyOption {
	option.PanicIf(isnil.Is(b), "retry.WithBudget: nil Budget")
	return func(o *policyOptions) { o.budget = b }
}

// WithPushback makes the policy honour the wait a result that retryable
// wants retried asks for (an HTTP Retry-After, gRPC's
// grpc-retry-pushback-ms), which after returns with true. The retry waits
// the longer of the pushback and the backoff; a negative pushback or one
// above max returns the result as it is. The default is to ignore
// pushback. Res must be the policy's response type, or NewPolicy panics.
// WithPushback panics if after is nil or max is not positive.
func WithPushback[Res any](after func(res Res, err error) (wait time.Duration, ok bool), max time.Duration) PolicyOption {
	option.PanicIf(after == nil, "retry.WithPushback: nil after")
	option.PanicIf(max <= 0, "retry.WithPushback: max must be positive, got %v", max)
	return func(o *policyOptions) { o.pushback, o.maxPushback = after, max }
}

// NewPolicy returns a StandardPolicy that retries the results retryable
// reports true for, such as [AnyError]. It panics if retryable or an
// option is nil.
func NewPolicy[Req, Res any](retryable func(res Res, err error) bool, opts ...PolicyOption) *StandardPolicy[Req, Res] {
	option.PanicIf(retryable == nil, "retry.NewPolicy: nil retryable")
	p := &StandardPolicy[Req, Res]{policyOptions: policyOptions{maxAttempts: 3}, retryable: retryable}
	option.Onto("retry.NewPolicy", &p.policyOptions, opts)
	if p.pushback != nil {
		after, ok := p.pushback.(func(Res, error) (time.Duration, bool))
		option.PanicIf(!ok, "retry.NewPolicy: the pushback is a %T, want a %v", p.pushback, reflect.TypeFor[func(Res, error) (time.Duration, bool)]())
		p.after = after
	}
	return p
}

// AnyError is a classifier for [NewPolicy] that retries every error and
// no response, even one a retry cannot mend, such as a malformed request;
// its type argument is inferred: NewPolicy[Req, Res](AnyError, ...).
func AnyError[Res any](_ Res, err error) bool { return err != nil }

// Clone returns req and true: a request that is a value can be sent again.
func (p *StandardPolicy[Req, Res]) Clone(req Req) (Req, bool) { return req, true }

// Retry decides on a's result as the type's doc describes.
func (p *StandardPolicy[Req, Res]) Retry(ctx context.Context, a *Attempt[Req, Res]) (time.Duration, bool) {
	if a.N == 1 && p.budget != nil {
		p.budget.Deposit()
	}
	if !p.retryable(a.Res, a.Err) {
		if _, timed := ctx.Deadline(); timed {
			p.learn(a.Latency)
		}
		return 0, false
	}
	if a.N >= p.maxAttempts || ctx.Err() != nil {
		return 0, false
	}
	var wait time.Duration
	if p.backoff != nil {
		wait = p.backoff.Delay(a.N)
	}
	if p.after != nil {
		if after, ok := p.after(a.Res, a.Err); ok {
			if after < 0 || after > p.maxPushback {
				return 0, false
			}
			wait = max(wait, after)
		}
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Add(wait).Add(p.Expected()).Before(d) {
		return 0, false
	}
	if p.budget != nil && !p.budget.Withdraw() {
		return 0, false
	}
	return wait, true
}

// Expected returns the latency the policy expects of an attempt: a moving
// average, each new latency weighing 1/8, of the final attempts (those
// retryable did not want retried) of requests with a deadline, the only
// ones timed. Failures are left out, as a backend that fails fast would
// make success look quicker than it is. It is 0 before the first.
func (p *StandardPolicy[Req, Res]) Expected() time.Duration {
	return time.Duration(p.expected.Load())
}

// learn adds d to the average; racing updates may lose a step (an estimate).
func (p *StandardPolicy[Req, Res]) learn(d time.Duration) {
	old := p.expected.Load()
	if old == 0 {
		p.expected.Store(int64(max(d, 1)))
		return
	}
	p.expected.Store(old + (int64(d)-old)/8)
}
