package retry

import (
	"context"
	"time"
)

// A Policy decides, request by request, whether a result is worth another
// try and what to send next: tower's retry Policy.
//
// For each call, the [Retry] asks Clone for a copy of the request before
// the request is sent, since sending may use it up; then, after each
// attempt, it asks Retry about the result. Clone is asked again before each
// later attempt, for a copy to keep while that attempt runs.
//
// A Policy is shared by every request through the Retry, on many goroutines
// at once, so it must be safe for concurrent use. State that spans
// requests, a [Budget] for instance, lives in the Policy; state of one
// request either comes from [Attempt.N], which is enough for an attempt
// limit and a backoff, or from a policy made for that request alone, see
// [SessionPolicy].
//
// Req is the request type and Res the response type.
type Policy[Req, Res any] interface {
	// Clone returns a copy of req to keep for a later attempt, before req
	// is sent. If req cannot be sent twice, Clone returns false: the
	// request is then tried once, its result is returned as it is, and
	// Retry is not called for it. Deciding which requests can be retried
	// is the policy's business: a request whose body is a stream that
	// sending consumes cannot be, unless the policy can make a new body
	// (see the example of Policy).
	Clone(req Req) (clone Req, ok bool)

	// Retry is called after each attempt of a request that Clone copied,
	// with a describing the attempt. It returns whether to try again and
	// how long to wait first; the Retry waits, honouring ctx, then waits
	// for the inner service to be ready and sends a.Req. If Retry returns
	// false, the caller gets a.Res and a.Err.
	//
	// Retry may change a.Req, and the next attempt sends the changed
	// request (to count attempts in a header, say); and it may change
	// a.Res and a.Err, to give the caller a different result (an error
	// saying retries ran out, say). a is valid only until Retry returns.
	//
	// ctx is the caller's context. Retry may block, to wait for something
	// other than time before the next attempt; it should then return when
	// ctx ends.
	Retry(ctx context.Context, a *Attempt[Req, Res]) (wait time.Duration, retry bool)
}

// An Attempt is one try of a request and its result, as a [Policy] sees it.
// Req is the request type and Res the response type.
type Attempt[Req, Res any] struct {
	// N is the number of the attempt: 1 for the first try of a request, 2
	// for its first retry, and so on. It is what a policy without state
	// of its own counts with.
	N int
	// Req is what the next attempt will send: the copy Clone made before
	// this attempt was sent. The policy may change it.
	Req Req
	// Res and Err are what the attempt returned, and what the caller gets
	// if the policy does not retry. The policy may change them.
	Res Res
	Err error
	// Latency is how long the attempt took, from the start of its Call on
	// the inner service's permit to its return: neither the backoff nor
	// the wait for the inner service's readiness is in it. It is measured
	// only for a request whose ctx has a deadline, and 0 otherwise: the
	// deadline is what a policy weighs a latency against, and two clock
	// reads would be a good share of what a Retry costs a request that
	// needs no retry.
	Latency time.Duration
}

// A SessionPolicy is a [Policy] that keeps state for each request, as a
// tower policy does (tower clones the policy for every request). For each
// call, the Retry calls NewSession once, and asks the policy it returns,
// and no other, to Clone the request and to decide on its results. State
// shared by all requests, such as a [Budget], belongs in the SessionPolicy
// itself, and each session should refer to it.
//
// A policy that only counts attempts needs no session: [Attempt.N] counts
// for it, at no cost per request. A session costs what NewSession
// allocates.
type SessionPolicy[Req, Res any] interface {
	Policy[Req, Res]
	// NewSession returns the policy for one request. The Retry uses it
	// on one goroutine at a time.
	NewSession() Policy[Req, Res]
}

// PolicyFunc adapts a function to a [Policy] whose Clone returns the
// request unchanged. That suits requests that are values, which copying
// clones: a string, a struct of values. A request that holds something
// sending uses up, such as a body to read, needs a Policy of its own with a
// Clone that can make a fresh copy or say it cannot.
type PolicyFunc[Req, Res any] func(ctx context.Context, a *Attempt[Req, Res]) (wait time.Duration, retry bool)

// Clone returns req and true.
func (PolicyFunc[Req, Res]) Clone(req Req) (Req, bool) { return req, true }

// Retry returns f(ctx, a).
func (f PolicyFunc[Req, Res]) Retry(ctx context.Context, a *Attempt[Req, Res]) (time.Duration, bool) {
	return f(ctx, a)
}
