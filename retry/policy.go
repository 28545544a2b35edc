package retry

import (
	"context"
	"time"
)

// A Policy decides whether a result is worth another try and what to send
// next: tower's retry Policy. The [Retry] asks Clone for a copy of the
// request before each attempt is sent, since sending may use it up, and
// asks Retry about each attempt's result.
//
// A Policy is shared by every request, on many goroutines at once, so it
// must be safe for concurrent use. State that spans requests, such as a
// [Budget], lives in the Policy; state of one request comes from
// [Attempt.N] or from a [SessionPolicy]. Req is the request type and Res
// the response type.
type Policy[Req, Res any] interface {
	// Clone returns a copy of req to keep for a later attempt, or false if
	// req cannot be sent twice (a body stream that sending consumes, unless
	// the policy can make a new one: see the example of Policy). A request
	// Clone refuses is tried once, its result returned as it is, and Retry
	// is not called for it.
	Clone(req Req) (clone Req, ok bool)

	// Retry is called after each attempt of a request Clone copied, and
	// returns whether to try again and how long to wait first; the Retry
	// then waits, honouring ctx, for that and for the inner service's
	// Ready, and sends a.Req. If it returns false, the caller gets a.Res
	// and a.Err. Retry may change a.Req, which the next attempt sends, and
	// a.Res and a.Err, which the caller gets; a is valid only until Retry
	// returns. ctx is the caller's: a Retry that blocks, to wait for
	// something other than time, should return when ctx ends.
	Retry(ctx context.Context, a *Attempt[Req, Res]) (wait time.Duration, retry bool)
}

// An Attempt is one try of a request and its result, as a [Policy] sees it.
// Req is the request type and Res the response type.
type Attempt[Req, Res any] struct {
	// N is the number of the attempt: 1 for the first try, 2 for the first
	// retry, and so on.
	N int
	// Req is what the next attempt will send: the copy Clone made before
	// this attempt was sent. The policy may change it.
	Req Req
	// Res and Err are what the attempt returned, and what the caller gets
	// if the policy does not retry. The policy may change them.
	Res Res
	Err error
	// Latency is how long the attempt's Call took, without the backoff or
	// the wait in Ready. It is measured only when ctx has a deadline, which
	// is what a policy weighs it against (clock reads are not free), and is
	// 0 otherwise.
	Latency time.Duration
}

// A SessionPolicy is a [Policy] that keeps state for each request, as a
// tower policy does. For each call the Retry calls NewSession once, and
// only the policy it returns clones the request and decides on its
// results. State shared by all requests, such as a [Budget], belongs in
// the SessionPolicy, for each session to refer to. A policy that only
// counts attempts needs no session: [Attempt.N] counts for it.
type SessionPolicy[Req, Res any] interface {
	Policy[Req, Res]
	// NewSession returns the policy for one request. The Retry uses it
	// on one goroutine at a time.
	NewSession() Policy[Req, Res]
}

// PolicyFunc adapts a function to a [Policy] whose Clone returns the
// request unchanged: for requests that are values, which copying clones. A
// request holding something that sending uses up, such as a body, needs a
// Policy whose Clone can make a fresh copy or refuse.
type PolicyFunc[Req, Res any] func(ctx context.Context, a *Attempt[Req, Res]) (wait time.Duration, retry bool)

// Clone returns req and true.
func (PolicyFunc[Req, Res]) Clone(req Req) (Req, bool) { return req, true }

// Retry returns f(ctx, a).
func (f PolicyFunc[Req, Res]) Retry(ctx context.Context, a *Attempt[Req, Res]) (time.Duration, bool) {
	return f(ctx, a)
}
