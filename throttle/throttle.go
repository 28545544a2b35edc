package throttle

import (
	"context"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/metrics"
)

// Throttle is client-side adaptive throttling: it rejects requests itself
// with the probability the package doc gives.
//
// A Throttle is safe for concurrent use. Its zero value is not usable;
// call [New]. Req and Res are the request and response types.
type Throttle[Req, Res any] struct {
	inner    tower.Service[Req, Res]
	accepted func(Res, error) bool
	options
	w     window
	wraps tower.WrapPool[Req, Res]
}

// New returns inner wrapped in a Throttle, with opts. accepted reports, from
// a sent call's result, whether the backend accepted the request: true if
// it took it and answered, whatever the answer; false if it refused it for
// overload (an HTTP 429 or 503, a gRPC RESOURCE_EXHAUSTED or UNAVAILABLE,
// an error that answers tower.IsOverloaded). It is called on the caller's
// goroutine without a lock. New panics if inner or accepted is nil (a
// typed nil too), or if an option is nil.
func New[Req, Res any](inner tower.Service[Req, Res], accepted func(res Res, err error) bool, opts ...Option) *Throttle[Req, Res] {
	const fn = "throttle.New"
	if isnil.Is(inner) {
		panic(fn + ": nil inner service")
	}
	if accepted == nil {
		panic(fn + ": nil accepted classifier")
	}
	t := &Throttle[Req, Res]{inner: inner, accepted: accepted, options: newOptions(fn, opts)}
	t.w.init(t.window)
	return t
}

// NewLayer returns a Layer that wraps each service in a Throttle of its
// own, with its own window, with accepted and opts. It panics if accepted
// or an option is nil; its Wrap panics if the service is nil.
func NewLayer[Req, Res any](accepted func(res Res, err error) bool, opts ...Option) tower.Layer[Req, Res] {
	const fn = "throttle.NewLayer"
	if accepted == nil {
		panic(fn + ": nil accepted classifier")
	}
	newOptions(fn, opts) // now, not when the layer is used
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return New(inner, accepted, opts...)
	})
}

// Ready decides whether to reject the request. If it does, it returns at
// once, even if ctx is done, a permit whose Call fails with ErrThrottled
// without reaching the inner service. Otherwise it waits for the inner
// Ready; an inner error is returned unchanged and not counted.
func (t *Throttle[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	if p := t.RejectionProbability(); p > 0 && t.rand() < p {
		return tower.NewPermit[Req, Res]((*hooks[Req, Res])(t), 0), nil
	}
	inner, err := t.inner.Ready(ctx)
	if err != nil {
		return inner, err
	}
	return t.wraps.Wrap((*hooks[Req, Res])(t), inner), nil
}

// RejectionProbability returns the probability with which a request would
// be rejected now, cap included.
func (t *Throttle[Req, Res]) RejectionProbability() float64 {
	requests, accepts := t.w.counts()
	r := float64(requests)
	p := (r - t.k*float64(accepts)) / (r + 1)
	return min(max(p, 0), t.maxReject)
}

// hooks is the Throttle's tower.Wrapper, and the tower.Reserver of the
// permits of rejected requests, which hold nothing; kept off its method set.
type hooks[Req, Res any] Throttle[Req, Res]

func (w *hooks[Req, Res]) CallWrapped(ctx context.Context, inner tower.Permit[Req, Res], req Req) (Res, error) {
	res, err := inner.Call(ctx, req)
	if err != nil && ctx.Err() == context.Canceled {
		return res, err
	}
	w.w.add(w.accepted(res, err))
	return res, err
}

func (*hooks[Req, Res]) ReleaseWrapped(inner tower.Permit[Req, Res]) { inner.Release() }

func (r *hooks[Req, Res]) CallReserved(context.Context, uint64, Req) (Res, error) {
	r.w.add(false)
	if r.sink != nil {
		r.sink.Add(metrics.Throttled, 1)
	}
	var zero Res
	return zero, ErrThrottled
}

func (*hooks[Req, Res]) ReleaseReserved(uint64) {}
