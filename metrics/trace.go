package metrics

import (
	"context"
	"time"

	"github.com/towergo/tower/internal/isnil"
)

// A Tracer hears what a trace shows of a request and a count cannot: how
// long it waited, and each extra attempt made for it. It travels in the
// request's context ([WithTracer]), so that every layer below where it was
// put reports to it. A request that goes straight through pays nothing
// for tracing.
//
// A Tracer runs on the caller's goroutine or a hedge's, so it must be safe
// for concurrent use. A panic in it goes where a panic in the middleware's
// other user code goes, once the middleware has given back what it held.
type Tracer interface {
	// Waited reports a wait that is over.
	Waited(ctx context.Context, w Wait)
	// StartAttempt reports that the attempt a starts now, and returns the
	// context it runs under: ctx, or one derived from it (carrying a span,
	// say). The middleware uses it for the attempt's wait, Ready and Call,
	// and gives it back to EndAttempt.
	StartAttempt(ctx context.Context, a Attempt) context.Context
	// EndAttempt reports that the attempt StartAttempt returned ctx for has
	// ended with err: nil if it answered without an error, else its error,
	// the context's if the caller gave up while it waited, or an error
	// that says a panic went through it.
	EndAttempt(ctx context.Context, err error)
}

// WaitKind says what a request waited for.
type WaitKind uint8

const (
	// ReadyWait is a wait in a service's Ready for capacity: a permit, a
	// rate window, a queue slot, a ready endpoint, a connect.
	ReadyWait WaitKind = iota + 1
	// QueueWait is a request's time in a Buffer's queue, from its Call to
	// its getting the inner service's permit, or leaving without one.
	QueueWait
)

var waitKindNames = [...]string{ReadyWait: "ready", QueueWait: "queue"}

// String returns "ready" or "queue", or "WaitKind(n)" if unknown.
func (k WaitKind) String() string { return name(k, "WaitKind", waitKindNames[:]) }

// A Wait is one wait of one request, over.
type Wait struct {
	Kind     WaitKind
	Start    time.Time     // when the wait began, from time.Now
	Duration time.Duration // how long it lasted
	// Err is nil if the wait got what it waited for, else why not: the
	// caller's context ending, the middleware closing or failing.
	Err error
}

// AttemptKind says why an extra attempt of a request was made.
type AttemptKind uint8

const (
	// RetryAttempt is an attempt a Retry's policy asked for.
	RetryAttempt AttemptKind = iota + 1
	// HedgeAttempt is the second copy a Hedge sends of a request whose
	// first has not answered in time; the first to answer wins.
	HedgeAttempt
)

var attemptKindNames = [...]string{RetryAttempt: "retry", HedgeAttempt: "hedge"}

// String returns "retry" or "hedge", or "AttemptKind(n)" if unknown.
func (k AttemptKind) String() string { return name(k, "AttemptKind", attemptKindNames[:]) }

// An Attempt describes an extra attempt of a request as it starts.
type Attempt struct {
	Kind AttemptKind
	// N is the attempt's number: the request's first attempt, which has
	// no Attempt of its own, is 1; its first retry, or its hedge, is 2.
	N int
	// Delay is, for a retry, the backoff it waits once started, before
	// its Ready; for a hedge, how long after the original it starts.
	Delay time.Duration
	// Cause is why the attempt is made, if known: for a retry, the error
	// of the previous attempt (nil if the policy retried a response). A
	// hedge has none: the original has not answered yet.
	Cause error
}

type tracerKey struct{}

// WithTracer returns a context that carries t, for the request's Ready and
// Call. It panics if t is nil (a typed nil too).
func WithTracer(ctx context.Context, t Tracer) context.Context {
	if isnil.Is(t) {
		panic("metrics.WithTracer: nil tracer")
	}
	return context.WithValue(ctx, tracerKey{}, t)
}

// TracerFrom returns the Tracer ctx carries, or nil.
func TracerFrom(ctx context.Context) Tracer {
	t, _ := ctx.Value(tracerKey{}).(Tracer)
	return t
}
