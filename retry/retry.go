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
// the result is worth another try.
//
// Once the ctx given to Call is done no attempt starts, and Call returns
// ctx.Err(). An error from the inner service's Ready is returned as it is.
// A panic in the policy or the inner service goes up to the caller, with
// the reservation given back.
//
// Each retry of a request whose context carries a [metrics.Tracer] is
// reported to it: StartAttempt (its number, backoff and the previous
// error) before its backoff, EndAttempt after its call; the retry runs
// under StartAttempt's context. A request that is not retried does not
// allocate.
//
// A Retry is safe for concurrent use. The zero Retry is not usable; build
// one with [New] or [NewLayer].
type Retry[Req, Res any] struct {
	inner    tower.Service[Req, Res]
	policy   Policy[Req, Res]
	sessions SessionPolicy[Req, Res] // policy, if it makes a policy per request
	sink     metrics.Sink            // nil: no metrics
	wraps    tower.WrapPool[Req, Res]
	attempts sync.Pool // of *Attempt[Req, Res]
}

// An Option configures a Retry.
type Option func(*options)

type options struct{ sink metrics.Sink }

// WithMetrics makes the Retry report to sink: Retried +1 for each retry
// whose Ready succeeded, just before its Call. The default, and a nil sink,
// is no metrics.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) { o.sink = sink }
}

// New returns inner wrapped in a Retry that follows policy, with opts. It
// panics if inner, policy (a typed nil too) or an option is nil.
func New[Req, Res any](inner tower.Service[Req, Res], policy Policy[Req, Res], opts ...Option) *Retry[Req, Res] {
	option.PanicIf(isnil.Is(inner), "retry.New: nil inner service")
	option.PanicIf(isnil.Is(policy), "retry.New: nil policy")
	o := option.Apply[options]("retry.New", opts)
	r := &Retry[Req, Res]{inner: inner, policy: policy, sink: o.sink}
	r.sessions, _ = policy.(SessionPolicy[Req, Res])
	return r
}

// NewLayer returns a Layer that wraps each service in a Retry, as [New]
// does. The Retries share policy, and so its budget. It panics if policy (a
// typed nil too) or an option is nil.
func NewLayer[Req, Res any](policy Policy[Req, Res], opts ...Option) tower.Layer[Req, Res] {
	option.PanicIf(isnil.Is(policy), "retry.NewLayer: nil policy")
	option.Apply[options]("retry.NewLayer", opts) // now, not when the layer is used
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return New(inner, policy, opts...)
	})
}

// Ready returns the inner service's permit for the first attempt, wrapped,
// or its error unchanged.
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
	defer inner.Release() // if ctx is done or the policy panics
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
	res, took, err := call(ctx, &inner, req)
	a, _ := w.attempts.Get().(*Attempt[Req, Res])
	if a == nil {
		a = new(Attempt[Req, Res])
	}
	*a = Attempt[Req, Res]{N: 1, Req: keep, Res: res, Err: err, Latency: took}
	defer func() {
		*a = Attempt[Req, Res]{} // the pool holds no request
		w.attempts.Put(a)
	}()
	for {
		wait, again := policy.Retry(ctx, a)
		if !again {
			return a.Res, a.Err
		}
		if t := metrics.TracerFrom(ctx); t != nil {
			again = w.tracedRetry(ctx, t, policy, a, wait)
		} else {
			again = w.retry(ctx, policy, a, wait)
		}
		if !again {
			return a.Res, a.Err
		}
	}
}

// retry waits wait, then for the inner service, sends a.Req, and records
// the result in a. It reports false if there can be no next attempt.
func (w *wrapper[Req, Res]) retry(ctx context.Context, policy Policy[Req, Res], a *Attempt[Req, Res], wait time.Duration) bool {
	if wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
	}
	err := mono.Err(ctx) // a backoff that ends at the deadline starts no attempt
	var p tower.Permit[Req, Res]
	if err == nil {
		p, err = w.inner.Ready(ctx)
	}
	if err != nil {
		var zero Res
		a.Res, a.Err = zero, err
		return false
	}
	defer p.Release() // if Clone or the sink panics; after the call it does nothing
	keep, ok := policy.Clone(a.Req)
	if w.sink != nil {
		w.sink.Add(metrics.Retried, 1)
	}
	res, took, err := call(ctx, &p, a.Req)
	*a = Attempt[Req, Res]{N: a.N + 1, Req: keep, Res: res, Err: err, Latency: took}
	return ok
}

// errPanicked is what a Tracer is told of a retry a panic went through.
var errPanicked = errors.New("retry: a panic went through the attempt")

// tracedRetry is retry run under t.StartAttempt's context, ended with
// t.EndAttempt.
func (w *wrapper[Req, Res]) tracedRetry(ctx context.Context, t metrics.Tracer, policy Policy[Req, Res], a *Attempt[Req, Res], wait time.Duration) bool {
	actx := t.StartAttempt(ctx, metrics.Attempt{Kind: metrics.RetryAttempt, N: a.N + 1, Delay: wait, Cause: a.Err})
	err := errPanicked // unless retry returns
	defer func() { t.EndAttempt(actx, err) }()
	ok := w.retry(actx, policy, a, wait)
	err = a.Err
	return ok
}

// call calls p, and returns how long the call took if ctx has a deadline
// (see [Attempt.Latency]), or 0 without reading the clock.
func call[Req, Res any](ctx context.Context, p *tower.Permit[Req, Res], req Req) (Res, time.Duration, error) {
	if _, ok := ctx.Deadline(); !ok {
		res, err := p.Call(ctx, req)
		return res, 0, err
	}
	start := mono.Now()
	res, err := p.Call(ctx, req)
	return res, mono.Now() - start, err
}
