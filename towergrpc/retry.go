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

// PushbackKey is the trailer metadata key with which a server tells a
// client how long to wait before it retries a call, in milliseconds, as
// gRPC's retry design (proposal A6) defines it: a non-negative integer is
// the wait, anything else, a negative number among them, asks for no retry.
const PushbackKey = "grpc-retry-pushback-ms"

// DefaultMaxPushback is the longest pushback a [RetryPolicy] waits for
// unless [WithMaxPushback] says otherwise: ten seconds, ten times the
// [DefaultPushback] a server of this package sends when it sheds, room for
// a server that asks for a few seconds while a burst passes, and short
// enough that a caller without a deadline is not kept waiting on a server
// that asks for minutes: that caller gets the server's status, and
// decides.
const DefaultMaxPushback = 10 * time.Second

// A RetryPolicy is a ready-made retry.Policy for a unary client stack:
//
//	stack := towergrpc.UnaryClientStack().RetryPolicy(towergrpc.NewRetryPolicy(
//		retry.WithBackoff(retry.NewFullJitterBackoff(50*time.Millisecond, time.Second)),
//	))
//	conn, err := grpc.NewClient(target, grpc.WithChainUnaryInterceptor(towergrpc.UnaryClientInterceptor(stack)))
//
// It builds on retry.StandardPolicy, which counts the attempts, waits the
// backoff, draws on a budget, and gives up when the call's deadline leaves
// too little time (see there); what it adds is what gRPC needs. It
// retries:
//
//   - a call the stack below the Retry refused, with an error that
//     answers tower.IsOverloaded, tower.IsUnavailable or
//     tower.IsThrottled (a LoadShed, an open breaker, a throttle, a
//     balancer without endpoints): it never left;
//   - codes.ResourceExhausted, only when the server sent a pushback
//     ([PushbackKey]), as A6 does: a server that sends one refused the
//     call (a server of this package sends one with each call it sheds,
//     see [WithPushback]); without one, RESOURCE_EXHAUSTED is a quota, or
//     a message too large, which a retry would meet again;
//   - codes.Unavailable, when nothing was sent, when the server sent a
//     pushback, or when the method is idempotent ([RetryPolicy.WithIdempotent]).
//
// Nothing was sent when grpc opened no stream for the call: no connection
// could be made or picked (a server that is down, with wait-for-ready
// off), and the call failed UNAVAILABLE before anything of it left. (grpc
// itself sends again, once, a call whose stream the server refused
// unprocessed.) Any other UNAVAILABLE may come from a server, or a proxy,
// that took the call and then failed: gRPC's table of codes warns that it
// is not always safe to retry non-idempotent operations on it. gRPC has no
// notion of an idempotent method, so by default no method is: say which
// are with WithIdempotent.
//
// A pushback is honoured: the retry waits the longer of the pushback and
// the backoff. A pushback that asks for no retry (negative, not a number,
// or given more than once) is obeyed, and so is a pushback longer than
// [DefaultMaxPushback], or than [WithMaxPushback] allows, which is not
// waited for: the caller gets the status.
//
// To read an attempt's trailer, the policy asks the innermost step of
// [UnaryClientInterceptor] to collect it (a grpc.Trailer call option),
// which only a call through that interceptor can do. That costs each call
// through the policy one allocation of its own and those of the call
// option; and each unary RPC through a client interceptor of this
// package carries a slot of its own for it (one allocation of 16 bytes),
// whatever its stack: the first attempt is sent before the policy sees
// anything but a copy of the call, so the slot must come with the call,
// and the interceptor cannot see into its stack to tell whether a
// RetryPolicy is in it.
//
// A RetryPolicy is safe for concurrent use. The zero RetryPolicy is not
// usable: build one with [NewRetryPolicy].
type RetryPolicy struct {
	std        *retry.StandardPolicy[UnaryClientCall, struct{}]
	idempotent func(fullMethod string) bool // nil: no method is
}

// NewRetryPolicy returns a RetryPolicy with opts, the options of a
// retry.StandardPolicy: retry.WithMaxAttempts (3 by default),
// retry.WithBackoff (none by default), retry.WithBudget (none by
// default), and [WithMaxPushback] to change the longest pushback it
// waits for. It panics if an option is nil.
func NewRetryPolicy(opts ...retry.PolicyOption) *RetryPolicy {
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("towergrpc.NewRetryPolicy: option %d is nil", i))
		}
	}
	all := append([]retry.PolicyOption{retry.WithPushback(pushbackOf, DefaultMaxPushback)}, opts...)
	return &RetryPolicy{std: retry.NewPolicy[UnaryClientCall](isJudged, all...)}
}

// WithMaxPushback sets the longest pushback a [RetryPolicy] waits for; a
// call whose server asks for longer fails with its status. The default
// is [DefaultMaxPushback]. It panics if max is not positive.
func WithMaxPushback(max time.Duration) retry.PolicyOption {
	if max <= 0 {
		panic(fmt.Sprintf("towergrpc.WithMaxPushback: max must be positive, got %v", max))
	}
	return retry.WithPushback(pushbackOf, max)
}

// WithIdempotent returns a copy of p that retries UNAVAILABLE for the
// methods idempotent reports true for, given their full name,
// "/package.Service/Method", whether or not the call was sent; p is
// unchanged, and the copy shares its attempts, backoff and budget. A
// method is idempotent if calling it twice has the effect of calling it
// once: a read, or a write keyed by the client. It panics if idempotent
// is nil.
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

// Retry decides on a's result as the type's doc describes.
func (p *RetryPolicy) Retry(ctx context.Context, a *retry.Attempt[UnaryClientCall, struct{}]) (time.Duration, bool) {
	err := a.Err
	if err == nil {
		return p.std.Retry(ctx, a)
	}
	j := p.judge(a.Req, err)
	if j == nil {
		return p.std.Retry(ctx, a) // not retryable: the policy learns the latency
	}
	a.Err = j
	wait, again := p.std.Retry(ctx, a)
	a.Err = err
	return wait, again
}

// judge returns err judged worth a retry, with its pushback, or nil.
func (p *RetryPolicy) judge(c UnaryClientCall, err error) *judged {
	if !isStatus(err) { // an error of the stack below the Retry
		if refused(err) {
			return &judged{error: err}
		}
		return nil
	}
	rec := c.trailers.record()
	wait, pushed := rec.pushback()
	code := status.Code(err)
	if code == codes.ResourceExhausted && pushed {
		return &judged{error: err, wait: wait, pushed: true}
	}
	if code == codes.Unavailable && (pushed || !rec.sent() || p.idempotent != nil && p.idempotent(c.Method)) {
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
// retry, with the pushback its server sent, as the StandardPolicy under it
// is shown it, for the time of its Retry.
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
	j, ok := err.(*judged)
	if !ok {
		return 0, false
	}
	return j.wait, j.pushed
}

// A trailerSlot is where the innermost step of a client stack leaves the
// trailer of each attempt of a call, for a RetryPolicy: the call and
// every copy the policy makes share it.
type trailerSlot struct {
	want atomic.Bool                   // a RetryPolicy asked for trailers
	last atomic.Pointer[trailerRecord] // the last attempt's, nil before it ends
}

// A trailerRecord is the trailer of one attempt. Each attempt has its
// own, so that two attempts at once (hedges) do not write to one.
type trailerRecord struct {
	md metadata.MD
}

// unsentKey is a key no trailer has: grpc gives keys in lower case. A
// record that still holds it once its attempt has ended got no trailer:
// grpc opened no stream.
const unsentKey = "Towergrpc-Unsent"

var unsent = metadata.MD{unsentKey: nil}

// invoke makes the call c, collecting its trailer into a new record.
func (s *trailerSlot) invoke(ctx context.Context, c UnaryClientCall) error {
	rec := &trailerRecord{md: unsent}
	opts := append(c.Opts[:len(c.Opts):len(c.Opts)], grpc.Trailer(&rec.md))
	err := c.invoker(ctx, c.Method, c.Req, c.Reply, c.Conn, opts...)
	s.last.Store(rec)
	return err
}

// record returns the trailer of the last attempt, or nil if there is no
// slot, or the attempt did not reach the innermost step.
func (s *trailerSlot) record() *trailerRecord {
	if s == nil {
		return nil
	}
	return s.last.Load()
}

// sent reports whether the attempt may have been sent: all but one for
// which grpc opened no stream.
func (r *trailerRecord) sent() bool {
	if r == nil {
		return true
	}
	_, never := r.md[unsentKey]
	return !never
}

// pushback returns the pushback of the attempt's trailer, and true if it
// has one: a wait, or -1 for no retry if the value is not a non-negative
// integer or there are several, as grpc's own retry reads it.
func (r *trailerRecord) pushback() (time.Duration, bool) {
	if r == nil {
		return 0, false
	}
	v := r.md[PushbackKey]
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
// or an outlier detector on a [UnaryClientStack]: it reports whether err
// says that the backend failed. The code of err, as the interceptor maps
// it (an error of a layer's is mapped as the package doc says), is a
// failure if it is codes.Unavailable (the server is down, or a layer
// below takes nothing), codes.DeadlineExceeded (a slow backend is a
// failing one, to its callers), codes.Internal, codes.Unknown (an error
// with no status) or codes.DataLoss. codes.Canceled, the caller's, is
// not; nor codes.ResourceExhausted, a refusal for overload (see
// [Accepted]), nor any code that says something of the request
// (InvalidArgument, NotFound, PermissionDenied...). It allocates nothing
// for a status, and for the sentinels of this module's layers.
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
// the backend accepted the call, that is, did not refuse it for overload.
// It did not if the code of err, mapped as the interceptor maps it, is
// codes.ResourceExhausted (a server of this package answers it for a call
// it shed) or codes.Unavailable (a server that takes nothing, or a layer
// below without endpoints; a connection that fails too, which gRPC does
// not tell apart). Any other result is the backend's answer to a call it
// took. It allocates nothing for a status, and for the sentinels of this
// module's layers.
func Accepted(_ struct{}, err error) bool {
	if err == nil {
		return true
	}
	c := status.Code(callError(err))
	return c != codes.ResourceExhausted && c != codes.Unavailable
}
