package retry

import (
	"context"
	"fmt"
	"time"

	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
)

// StandardPolicy is a ready-made [Policy] for requests that are values
// (its Clone returns the request unchanged). After each attempt it decides,
// in this order:
//
//  1. On a request's first attempt, it deposits into the budget, if it has
//     one: one deposit per request, as Finagle's RetryFilter does, so the
//     budget's percent is a share of requests, whatever their results.
//  2. A result that retryable does not want retried is returned.
//  3. Once the request has had its maximum number of attempts, the last
//     result is returned.
//  4. If ctx is done, the last result is returned.
//  5. The wait is the backoff's delay for this attempt, or none. If ctx
//     has a deadline that the wait would reach, the last result is
//     returned now rather than a context error later: a retry that could
//     not even start in time is not worth waiting for.
//  6. If the budget has nothing to withdraw, the last result is returned:
//     an exhausted budget gives the caller what the inner service last
//     said, response or error, not an error of its own.
//
// A StandardPolicy keeps no state per request (it counts with [Attempt.N]),
// so it costs nothing per request beyond its budget. It is safe for
// concurrent use. Its zero value is not usable; build one with
// [NewPolicy]. Req is the request type and Res the response type.
type StandardPolicy[Req, Res any] struct {
	retryable   func(res Res, err error) bool
	maxAttempts int
	backoff     Backoff
	budget      Budget
}

// A PolicyOption configures a [StandardPolicy].
type PolicyOption func(*policyOptions)

type policyOptions struct {
	maxAttempts int
	backoff     Backoff
	budget      Budget
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

// WithBudget makes retries draw on b, which may be shared with other
// policies, and with package hedge. The default is no budget: only the
// maximum number of attempts limits retries. It panics if b is nil, or a
// typed nil.
func WithBudget(b Budget) PolicyOption {
	if isnil.Is(b) {
		panic("retry.WithBudget: nil Budget")
	}
	return func(o *policyOptions) { o.budget = b }
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
	return &StandardPolicy[Req, Res]{
		retryable:   retryable,
		maxAttempts: o.maxAttempts,
		backoff:     o.backoff,
		budget:      o.budget,
	}
}

// AnyError is a classifier for [NewPolicy] that retries every error and
// no response. Passed as it is, its type argument is inferred:
// NewPolicy[Req, Res](AnyError, ...). An error a retry cannot mend (a
// request the server refused as malformed) is retried too, within the
// maximum number of attempts; a classifier of one's own can tell them
// apart.
func AnyError[Res any](_ Res, err error) bool { return err != nil }

// Clone returns req and true: a request that is a value can be sent again.
func (p *StandardPolicy[Req, Res]) Clone(req Req) (Req, bool) { return req, true }

// Retry decides on a's result as the type's doc describes.
func (p *StandardPolicy[Req, Res]) Retry(ctx context.Context, a *Attempt[Req, Res]) (time.Duration, bool) {
	if a.N == 1 && p.budget != nil {
		p.budget.Deposit()
	}
	if !p.retryable(a.Res, a.Err) || a.N >= p.maxAttempts || ctx.Err() != nil {
		return 0, false
	}
	var wait time.Duration
	if p.backoff != nil {
		wait = p.backoff.Delay(a.N)
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Add(wait).Before(d) {
		return 0, false
	}
	if p.budget != nil && !p.budget.Withdraw() {
		return 0, false
	}
	return wait, true
}
