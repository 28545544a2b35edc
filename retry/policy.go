package retry

import (
	"context"
	"time"
)

// A Policy decides whether a result is worth another try and what to send
// next: tower's retry Policy. One Policy serves every request, on many
// goroutines at once, so it must be safe for concurrent use. State that
// spans requests, such as a [Budget], lives in the Policy; state of one
// request comes from [Attempt.N] or from a [SessionPolicy].
type Policy[Req, Res any] interface {
	// Clone is called before each attempt is sent, which may use req up. It
	// returns a copy of req to keep for a later attempt, or false if req
	// cannot be sent twice (see the example of Policy); then the attempt
	// is the last, and its result is returned without calling Retry.
	Clone(req Req) (clone Req, ok bool)

	// Retry is called after each attempt of a request Clone copied, and
	// returns whether to try again and how long to wait first. If it
	// returns false, the caller gets a.Res and a.Err. a is valid only until
	// Retry returns. A Retry that blocks should return when ctx ends.
	Retry(ctx context.Context, a *Attempt[Req, Res]) (wait time.Duration, retry bool)
}

// An Attempt is one try of a request and its result, as a [Policy] sees it.
type Attempt[Req, Res any] struct {
	N   int // the attempt's number: 1 for the first try, 2 for the first retry
	Req Req // what the next attempt sends: Clone's copy, which the policy may change
	// Res and Err are what the attempt returned, and what the caller gets
	// if the policy does not retry. The policy may change them.
	Res Res
	Err error
	// Latency is how long the attempt's Call took, without the backoff or
	// the wait in Ready, if ctx has a deadline; otherwise it is 0.
	Latency time.Duration
}

// A SessionPolicy is a [Policy] that keeps state for each request, as a
// tower policy does. For each call the Retry calls NewSession once, and
// only the policy it returns clones the request and decides on its
// results.
type SessionPolicy[Req, Res any] interface {
	Policy[Req, Res]
	// NewSession returns the policy for one request. The Retry uses it
	// on one goroutine at a time.
	NewSession() Policy[Req, Res]
}

// PolicyFunc adapts a function to a [Policy] whose Clone returns the
// request unchanged: for requests that are values, which copying clones.
type PolicyFunc[Req, Res any] func(ctx context.Context, a *Attempt[Req, Res]) (wait time.Duration, retry bool)

// Clone returns req and true.
func (PolicyFunc[Req, Res]) Clone(req Req) (Req, bool) { return req, true }

// Retry returns f(ctx, a).
func (f PolicyFunc[Req, Res]) Retry(ctx context.Context, a *Attempt[Req, Res]) (time.Duration, bool) {
	return f(ctx, a)
}
