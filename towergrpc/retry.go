package towergrpc

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/towergo/tower"
	"github.com/towergo/tower/retry"
)

// PushbackKey is the trailer key with which a server tells a client how
// long to wait before it retries a call, in milliseconds, as gRPC's retry
// design (proposal A6) defines it: a non-negative integer is the wait;
// anything else, a negative number among them, asks for no retry.
const PushbackKey = "grpc-retry-pushback-ms"

// DefaultMaxPushback is the longest pushback a [RetryPolicy] waits for
// unless [WithMaxPushback] says otherwise: room for a burst to pass, short
// enough that a caller is not kept waiting for minutes.
const DefaultMaxPushback = 10 * time.Second

// A RetryPolicy is a ready-made retry.Policy for a unary client stack:
//
//	stack := towergrpc.UnaryClientStack().RetryPolicy(towergrpc.NewRetryPolicy(
//		retry.WithBackoff(retry.NewFullJitterBackoff(50*time.Millisecond, time.Second)),
//	))
//	conn, err := grpc.NewClient(target, grpc.WithChainUnaryInterceptor(towergrpc.UnaryClientInterceptor(stack)))
//
// It builds on retry.StandardPolicy (attempts, backoff, budget, deadline)
// and retries:
//
//   - a call the stack below the Retry refused (tower.IsOverloaded,
//     tower.IsUnavailable or tower.IsThrottled): it never left;
//   - codes.ResourceExhausted only with a pushback ([PushbackKey]): without
//     one it is a quota, or a message too large;
//   - codes.Unavailable when grpc opened no stream for the call (nothing
//     was sent), when the server sent a pushback, or when the method is
//     idempotent ([RetryPolicy.WithIdempotent]; by default none is, as an
//     UNAVAILABLE may come from a server that took the call).
//
// The retry waits the longer of the pushback and the backoff. A pushback
// that asks for no retry, or is longer than [WithMaxPushback] allows, is
// obeyed: the caller gets the status. Only a call through
// [UnaryClientInterceptor] has its trailer read. A RetryPolicy is safe for
// concurrent use. The zero RetryPolicy is not usable: build one with
// [NewRetryPolicy].
type RetryPolicy struct {
	std        *retry.StandardPolicy[UnaryClientCall, struct{}]
	idempotent func(fullMethod string) bool // nil: no method is
}

// NewRetryPolicy returns a RetryPolicy with opts, the options of a
// retry.StandardPolicy: retry.WithMaxAttempts (3 by default),
// retry.WithBackoff and retry.WithBudget (none by default), and
// [WithMaxPushback]. It panics if an option is nil.
func NewRetryPolicy(opts ...retry.PolicyOption) *RetryPolicy {
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("towergrpc.NewRetryPolicy: option %d is nil", i))
		}
	}
	all := append([]retry.PolicyOption{retry.WithPushback(pushbackOf, DefaultMaxPushback)}, opts...)
	return &RetryPolicy{std: retry.NewPolicy[UnaryClientCall](isJudged, all...)}
}

// WithMaxPushback sets the longest pushback a [RetryPolicy] waits for,
// [DefaultMaxPushback] by default. It panics if max is not positive.
func WithMaxPushback(max time.Duration) retry.PolicyOption {
	if max <= 0 {
		panic(fmt.Sprintf("towergrpc.WithMaxPushback: max must be positive, got %v", max))
	}
	return retry.WithPushback(pushbackOf, max)
}

// WithIdempotent returns a copy of p, sharing its attempts, backoff and
// budget, that retries UNAVAILABLE, sent or not, for the methods
// idempotent reports true for, given their full name: those that, called
// twice, have the effect of one call. It panics if idempotent is nil.
func (p *RetryPolicy) WithIdempotent(idempotent func(fullMethod string) bool) *RetryPolicy {
	if idempotent == nil {
		panic("towergrpc.RetryPolicy.WithIdempotent: nil function")
	}
	q := *p
	q.idempotent = idempotent
	return &q
}

// Clone returns c, and makes the call's attempts collect their trailer for
// Retry to read.
func (p *RetryPolicy) Clone(c UnaryClientCall) (UnaryClientCall, bool) {
	if s := c.trailers; s != nil {
		if !s.want.Load() {
			s.want.Store(true)
		}
		s.last.Store(nil) // the next attempt's, once it has been made
	}
	return c, true
}

// Retry decides on a's result as [RetryPolicy] says.
func (p *RetryPolicy) Retry(ctx context.Context, a *retry.Attempt[UnaryClientCall, struct{}]) (time.Duration, bool) {
	err := a.Err
	if j := p.judge(a.Req, err); j != nil {
		a.Err = j
		wait, again := p.std.Retry(ctx, a)
		a.Err = err
		return wait, again
	}
	return p.std.Retry(ctx, a) // a success, or not retryable: the policy learns the latency
}

// judge returns err judged worth a retry, with its pushback, or nil.
func (p *RetryPolicy) judge(c UnaryClientCall, err error) *judged {
	if err == nil {
		return nil
	}
	if !isStatus(err) { // an error of the stack below the Retry
		if refused(err) {
			return &judged{error: err}
		}
		return nil
	}
	var md metadata.MD // nil, of an attempt that has not ended, reads as sent
	if c.trailers != nil {
		if last := c.trailers.last.Load(); last != nil {
			md = *last
		}
	}
	wait, pushed := pushback(md)
	_, unsent := md[unsentKey]
	code := status.Code(err)
	if code == codes.ResourceExhausted && pushed ||
		code == codes.Unavailable && (pushed || unsent || p.idempotent != nil && p.idempotent(c.Method)) {
		return &judged{error: err, wait: wait, pushed: pushed}
	}
	return nil
}

// refused reports whether err is a refusal for overload, throttling or
// unavailability.
func refused(err error) bool {
	return tower.IsOverloaded(err) || tower.IsUnavailable(err) || tower.IsThrottled(err)
}

// A judged error is an attempt's error that a RetryPolicy found worth a
// retry, as its StandardPolicy is shown it.
type judged struct {
	error
	wait   time.Duration
	pushed bool
}

func (j *judged) Unwrap() error { return j.error }

// isJudged is the StandardPolicy's classifier.
func isJudged(_ struct{}, err error) bool {
	_, ok := err.(*judged)
	return ok
}

// pushbackOf is the StandardPolicy's pushback.
func pushbackOf(_ struct{}, err error) (time.Duration, bool) {
	if j, ok := err.(*judged); ok {
		return j.wait, j.pushed
	}
	return 0, false
}

// A trailerSlot is where the innermost step of a unary client stack
// leaves the trailer of each attempt of a call for a RetryPolicy. Every
// call carries one: the first attempt is sent before the policy sees the
// call, and the interceptor cannot tell whether its stack holds a policy.
type trailerSlot struct {
	want atomic.Bool                 // a RetryPolicy asked for trailers
	last atomic.Pointer[metadata.MD] // the last attempt's, nil before it ends; each attempt (a hedge's too) has its own
}

// unsentKey is a key no trailer has (grpc's keys are lower case): an
// attempt's trailer that still holds it got none, as grpc opened no
// stream, so nothing was sent.
const unsentKey = "Towergrpc-Unsent"

var unsent = metadata.MD{unsentKey: nil}

// invoke makes the call c, collecting its trailer into the slot.
func (s *trailerSlot) invoke(ctx context.Context, c UnaryClientCall) error {
	md := unsent
	opts := append(c.Opts[:len(c.Opts):len(c.Opts)], grpc.Trailer(&md))
	err := c.invoker(ctx, c.Method, c.Req, c.Reply, c.Conn, opts...)
	s.last.Store(&md)
	return err
}

// pushback returns the pushback of a trailer, and true if it has one: a
// wait, or -1 for no retry if the value is not a non-negative integer or
// there are several, as grpc's own retry reads it.
func pushback(md metadata.MD) (time.Duration, bool) {
	v := md[PushbackKey]
	if len(v) == 0 {
		return 0, false
	}
	if len(v) > 1 {
		return -1, true
	}
	ms, err := strconv.Atoi(v[0])
	if err != nil || ms < 0 {
		return -1, true
	}
	if ms > math.MaxInt64/int(time.Millisecond) {
		return math.MaxInt64, true
	}
	return time.Duration(ms) * time.Millisecond, true
}

// Failure is a classifier of unary client results, for a circuit breaker
// or an outlier detector on a [UnaryClientStack]: it reports whether err,
// mapped as the interceptor maps it, has a code that says the backend
// failed: Unavailable, DeadlineExceeded (a slow backend is a failing one),
// Internal, Unknown (an error with no status) or DataLoss; not Canceled,
// ResourceExhausted (see [Accepted]), nor a code about the request.
func Failure(_ struct{}, err error) bool {
	if err == nil {
		return false
	}
	c := status.Code(callError(err))
	return c == codes.Unavailable || c == codes.DeadlineExceeded || c == codes.Internal ||
		c == codes.Unknown || c == codes.DataLoss
}

// Accepted is a classifier of unary client results, for a client-side
// throttle (package throttle) on a [UnaryClientStack]: it reports whether
// the backend accepted the call, that is, err mapped as the interceptor
// maps it is not codes.ResourceExhausted (shed) nor codes.Unavailable
// (refused, no endpoints, or a failed connection, which gRPC does not
// tell apart).
func Accepted(_ struct{}, err error) bool {
	if err == nil {
		return true
	}
	c := status.Code(callError(err))
	return c != codes.ResourceExhausted && c != codes.Unavailable
}
