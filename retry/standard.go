package retry

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
)

// StandardPolicy is a ready-made [Policy] for requests that are values
// (its Clone returns the request unchanged). After each attempt it decides,
// in this order:
//
//  1. On a request's first attempt, it deposits into its budget, if any:
//     once per request, whatever the result, as Finagle's RetryFilter does.
//  2. A result that retryable does not want retried is returned.
//  3. After the maximum number of attempts, or once ctx is done, the last
//     result is returned.
//  4. The wait is the backoff's delay, or none. With [WithPushback], a
//     result that asks for a wait makes it at least that; one that asks
//     for no retry, or for more than the maximum, is returned as it is.
//  5. If the wait plus [StandardPolicy.Expected] would reach ctx's
//     deadline, the last result is returned now: a retry that cannot
//     answer in time only adds load, and would end in a context error.
//  6. If the budget has nothing to withdraw, the last result is returned,
//     response or error, not an error of the policy's own.
//
// Expected is learnt from the final results (those retryable did not want
// retried) of requests with a deadline, the only ones timed: a moving
// average in which each new latency weighs 1/8. Failures are left out, as
// a backend that fails fast would make success look quicker than it is.
// Until the first, only the wait is checked against the deadline.
//
// A StandardPolicy keeps no per-request state (it counts with [Attempt.N])
// and is safe for concurrent use. Its zero value is not usable; build one
// with [NewPolicy]. Req is the request type and Res the response type.
type StandardPolicy[Req, Res any] struct {
	retryable   func(res Res, err error) bool
	pushback    func(res Res, err error) (time.Duration, bool) // nil: none
	maxPushback time.Duration
	maxAttempts int
	backoff     Backoff
	budget      Budget
	expected    atomic.Int64 // nanoseconds: the moving average of final attempts' latencies
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
	if n < 1 {
		panic(fmt.Sprintf("retry.WithMaxAttempts: n must be at least 1, got %d", n))
	}
	return func(o *policyOptions) { o.maxAttempts = n }
}

// WithBackoff sets how long to wait before each retry. The default is not
// to wait. It panics if b is nil, or a typed nil.
func WithBackoff(b Backoff) PolicyOption {
	if isnil.Is(b) {
		panic("retry.WithBackoff: nil Backoff")
	}
	return func(o *policyOptions) { o.backoff = b }
}

// WithBudget makes retries draw on b, which may be shared (see [Budget]).
// The default is no budget: only the maximum number of attempts limits
// retries. It panics if b is nil, or a typed nil.
func WithBudget(b Budget) PolicyOption {
	if isnil.Is(b) {
		panic("retry.WithBudget: nil Budget")
	}
	return func(o *policyOptions) { o.budget = b }
}

// WithPushback makes the policy honour the wait a result asks for (an HTTP
// Retry-After, gRPC's grpc-retry-pushback-ms): after returns it, and true,
// for a result that carries one, and is asked only about results retryable
// wants retried. The retry waits the longer of the pushback and the
// backoff. A negative pushback (the server asks for no retry) or one above
// max returns the result as it is. Res must be the policy's response type,
// or NewPolicy panics. WithPushback panics if after is nil or max is not
// positive.
func WithPushback[Res any](after func(res Res, err error) (wait time.Duration, ok bool), max time.Duration) PolicyOption {
	if after == nil {
		panic("retry.WithPushback: nil after")
	}
	if max <= 0 {
		panic(fmt.Sprintf("retry.WithPushback: max must be positive, got %v", max))
	}
	return func(o *policyOptions) { o.pushback, o.maxPushback = after, max }
}

// NewPolicy returns a StandardPolicy that retries the results retryable
// reports true for: [AnyError] to retry every error. It panics if
// retryable or an option is nil: what is worth retrying is the caller's
// decision, never a default.
func NewPolicy[Req, Res any](retryable func(res Res, err error) bool, opts ...PolicyOption) *StandardPolicy[Req, Res] {
	if retryable == nil {
		panic("retry.NewPolicy: nil retryable")
	}
	o := policyOptions{maxAttempts: 3}
	option.Onto("retry.NewPolicy", &o, opts)
	p := &StandardPolicy[Req, Res]{
		retryable:   retryable,
		maxAttempts: o.maxAttempts,
		backoff:     o.backoff,
		budget:      o.budget,
		maxPushback: o.maxPushback,
	}
	if o.pushback != nil {
		after, ok := o.pushback.(func(Res, error) (time.Duration, bool))
		if !ok {
			panic(fmt.Sprintf("retry.NewPolicy: the pushback is a %T, want a %v", o.pushback, reflect.TypeFor[func(Res, error) (time.Duration, bool)]()))
		}
		p.pushback = after
	}
	return p
}

// AnyError is a classifier for [NewPolicy] that retries every error and
// no response; its type argument is inferred: NewPolicy[Req, Res](AnyError,
// ...). It retries errors a retry cannot mend too, such as a malformed
// request; a classifier of one's own can tell them apart.
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
	if p.pushback != nil {
		if after, ok := p.pushback(a.Res, a.Err); ok {
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

// Expected returns the latency the policy expects of an attempt (see
// [StandardPolicy]), or 0 before the first final result.
func (p *StandardPolicy[Req, Res]) Expected() time.Duration {
	return time.Duration(p.expected.Load())
}

// learn adds the latency of a final attempt to the moving average. Two
// attempts that end at once may overwrite each other's step: the average
// is an estimate, and a lost step costs less than a compare-and-swap loop.
func (p *StandardPolicy[Req, Res]) learn(d time.Duration) {
	old := p.expected.Load()
	if old == 0 {
		p.expected.Store(int64(max(d, 1)))
		return
	}
	p.expected.Store(old + (int64(d)-old)/8)
}
