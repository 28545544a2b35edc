package retry

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/mono"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
)

// Retry is middleware that sends a request again while its [Policy] says
// the result is worth another try: tower's Retry.
//
// Ready is the first attempt's: it wraps the inner service's permit, and
// the first attempt is sent on it. Each later attempt waits the policy's
// backoff, then for the inner service's Ready, under the ctx given to Call;
// it holds no reservation while it backs off. ctx is checked before each
// Ready and after each backoff: once it is done no attempt starts, and Call
// returns ctx.Err(), dropping the last attempt's result. An error from the
// inner service's Ready means it is broken, and is returned as it is.
//
// A Retry starts no goroutine: the policy, its backoff and budget, and the
// inner service run on the caller's goroutine, and a panic in any of them
// goes on up to the caller once the Retry has given back its reservation.
//
// Each retry (not the first attempt) of a request whose context carries a
// [metrics.Tracer] is reported to it: StartAttempt before its backoff, with
// its number, the backoff and the previous error; the backoff, Ready and
// Call run under the context StartAttempt returned; then EndAttempt with
// the retry's error. A request that is not retried neither looks for a
// Tracer nor allocates: its permit record and [Attempt] come from pools.
//
// A Retry is safe for concurrent use. The zero Retry is not usable; build
// one with [New] or [NewLayer]. Req and Res are the request and response
// types.
type Retry[Req, Res any] struct {
	inner    tower.Service[Req, Res]
	policy   Policy[Req, Res]
	sessions SessionPolicy[Req, Res] // policy, if it makes a policy per request
	sink     metrics.Sink            // nil: no metrics
	wraps    tower.WrapPool[Req, Res]
	attempts sync.Pool // of *Attempt[Req, Res]
}

// An Option configures a Retry. (A [PolicyOption] configures a
// [StandardPolicy].)
type Option func(*options)

type options struct {
	sink metrics.Sink
}

// WithMetrics makes the Retry report to sink: Retried +1 for each retry,
// once its Ready has succeeded, just before its Call. First attempts are
// not counted, nor a retry that ctx or a failed Ready stopped. The default,
// and a nil sink, is no metrics.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) { o.sink = sink }
}

// newOptions applies opts for the function named fn.
func newOptions(fn string, opts []Option) options {
	return option.Apply[options](fn, opts)
}

// New returns inner wrapped in a Retry that follows policy, with opts; a
// [SessionPolicy] gives each call a policy of its own. New panics if inner,
// policy (a typed nil too) or an option is nil.
func New[Req, Res any](inner tower.Service[Req, Res], policy Policy[Req, Res], opts ...Option) *Retry[Req, Res] {
	if isnil.Is(inner) {
		panic("retry.New: nil inner service")
	}
	if isnil.Is(policy) {
		panic("retry.New: nil policy")
	}
	o := newOptions("retry.New", opts)
	r := &Retry[Req, Res]{inner: inner, policy: policy, sink: o.sink}
	r.sessions, _ = policy.(SessionPolicy[Req, Res])
	return r
}

// NewLayer returns a Layer that wraps each service in a Retry, as [New]
// does. The Retries share policy, and so its budget. It panics if policy (a
// typed nil too) or an option is nil.
func NewLayer[Req, Res any](policy Policy[Req, Res], opts ...Option) tower.Layer[Req, Res] {
	if isnil.Is(policy) {
		panic("retry.NewLayer: nil policy")
	}
	newOptions("retry.NewLayer", opts) // now, not when the layer is used
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return New(inner, policy, opts...)
	})
}

// Ready waits for the inner service to be ready for the first attempt and
// returns its permit wrapped, or its error unchanged.
func (r *Retry[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	p, err := r.inner.Ready(ctx)
	if err != nil {
		return p, err
	}
	return r.wraps.Wrap((*wrapper[Req, Res])(r), p), nil
}

// wrapper is Retry's tower.Wrapper, kept off Retry's method set.
type wrapper[Req, Res any] Retry[Req, Res]

func (w *wrapper[Req, Res]) ReleaseWrapped(inner tower.Permit[Req, Res]) { inner.Release() }

func (w *wrapper[Req, Res]) CallWrapped(ctx context.Context, inner tower.Permit[Req, Res], req Req) (Res, error) {
	var zero Res
	// Gives the permit back if ctx is done, or if the policy panics before
	// the first attempt; after the first attempt it holds nothing.
	defer inner.Release()
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	policy := w.policy
	if w.sessions != nil {
		policy = w.sessions.NewSession()
	}
	keep, ok := policy.Clone(req)
	if !ok {
		return inner.Call(ctx, req)
	}
	start, timed := clock(ctx)
	res, err := inner.Call(ctx, req)
	took := since(start, timed)
	a, _ := w.attempts.Get().(*Attempt[Req, Res])
	if a == nil {
		a = new(Attempt[Req, Res])
	}
	*a = Attempt[Req, Res]{N: 1, Req: keep, Res: res, Err: err, Latency: took}
	defer w.putAttempt(a)
	for {
		wait, again := policy.Retry(ctx, a)
		if !again {
			return a.Res, a.Err
		}
		// Only a request that is retried looks for a Tracer.
		if t := metrics.TracerFrom(ctx); t != nil {
			keep, ok, res, took, err = w.tracedRetry(ctx, t, policy, a, wait)
		} else {
			keep, ok, res, took, err = w.retry(ctx, policy, a.Req, wait)
		}
		if !ok {
			return res, err
		}
		a.N++
		a.Req, a.Res, a.Err, a.Latency = keep, res, err, took
	}
}

// retry waits wait, then for the inner service's Ready, and sends req. It
// returns the policy's copy of req for the next attempt, the result, and
// how long the call took; ok is false if there can be no next attempt: ctx
// ended, the inner service failed, or the policy cannot copy req.
func (w *wrapper[Req, Res]) retry(ctx context.Context, policy Policy[Req, Res], req Req, wait time.Duration) (keep Req, ok bool, res Res, took time.Duration, err error) {
	if err := sleep(ctx, wait); err != nil {
		return keep, false, res, 0, err
	}
	p, err := w.inner.Ready(ctx)
	if err != nil {
		return keep, false, res, 0, err
	}
	return w.send(ctx, policy, p, req)
}

// errPanicked is what a Tracer is told of a retry a panic went through.
var errPanicked = errors.New("retry: a panic went through the attempt")

// tracedRetry is retry run under t.StartAttempt's context, ended with
// t.EndAttempt. a is the attempt before it.
func (w *wrapper[Req, Res]) tracedRetry(ctx context.Context, t metrics.Tracer, policy Policy[Req, Res], a *Attempt[Req, Res], wait time.Duration) (keep Req, ok bool, res Res, took time.Duration, err error) {
	actx := t.StartAttempt(ctx, metrics.Attempt{Kind: metrics.RetryAttempt, N: a.N + 1, Delay: wait, Cause: a.Err})
	ended := false
	defer func() {
		if !ended {
			t.EndAttempt(actx, errPanicked)
		}
	}()
	keep, ok, res, took, err = w.retry(actx, policy, a.Req, wait)
	ended = true
	t.EndAttempt(actx, err)
	return keep, ok, res, took, err
}

// send sends req, a retry, on p, and returns what retry does. If Clone or
// the sink panics before p is called, p is given back as the panic goes up.
func (w *wrapper[Req, Res]) send(ctx context.Context, policy Policy[Req, Res], p tower.Permit[Req, Res], req Req) (keep Req, ok bool, res Res, took time.Duration, err error) {
	defer p.Release() // after the call it does nothing
	keep, ok = policy.Clone(req)
	if w.sink != nil {
		w.sink.Add(metrics.Retried, 1)
	}
	start, timed := clock(ctx)
	res, err = p.Call(ctx, req)
	return keep, ok, res, since(start, timed), err
}

// clock returns the time now and true if ctx has a deadline, or false
// without reading the clock: only with a deadline can a policy use the
// attempt's latency (see [Attempt.Latency]).
func clock(ctx context.Context) (time.Duration, bool) {
	if _, ok := ctx.Deadline(); !ok {
		return 0, false
	}
	return mono.Now(), true
}

// since returns the time since start, if the clock was started.
func since(start time.Duration, timed bool) time.Duration {
	if !timed {
		return 0
	}
	return mono.Now() - start
}

// putAttempt clears a, so that the pool holds no request, and pools it.
func (w *wrapper[Req, Res]) putAttempt(a *Attempt[Req, Res]) {
	*a = Attempt[Req, Res]{}
	w.attempts.Put(a)
}

// sleep waits for d, or until ctx is done, and returns mono.Err(ctx): a
// backoff that ends at the very instant of the deadline starts no attempt.
func sleep(ctx context.Context, d time.Duration) error {
	if d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	return mono.Err(ctx)
}
