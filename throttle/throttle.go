package throttle

import (
	"context"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/metrics"
)

// Throttle is client-side adaptive throttling: it rejects requests itself
// with the probability the package doc gives, capped by [WithMaxRejection].
// The decision is made in Ready. A request that passes waits for the inner
// Ready and gets a permit that wraps the inner one; its call's result is
// counted as the classifier given to [New] says. A rejected request gets
// at once a permit that holds nothing: its Call fails with [ErrThrottled]
// without reaching the inner service.
//
// A Throttle is safe for concurrent use. Its zero value is not usable;
// call [New]. Req and Res are the request and response types.
type Throttle[Req, Res any] struct {
	inner    tower.Service[Req, Res]
	accepted func(Res, error) bool
	k, most  float64 // K, and the cap on the rejection probability
	rand     Rand
	sink     metrics.Sink // nil: no metrics
	w        window
	wraps    tower.WrapPool[Req, Res]
}

// New returns inner wrapped in a Throttle, with opts. accepted reports, from
// a sent call's result, whether the backend accepted the request: true if
// it took it and answered, whatever the answer; false if it refused it for
// overload (an HTTP 429 or 503, a gRPC RESOURCE_EXHAUSTED or UNAVAILABLE,
// an error that answers tower.IsOverloaded). [NotOverloaded] reads the
// error. accepted is called on the caller's goroutine without a lock; a
// panic in it goes up to the caller of Call, uncounted. It is not called
// for a call that fails while its ctx is cancelled, which is not counted;
// a call whose deadline passed is counted as any other.
//
// New panics if inner or accepted is nil (a typed nil too), or if an
// option is nil.
func New[Req, Res any](inner tower.Service[Req, Res], accepted func(res Res, err error) bool, opts ...Option) *Throttle[Req, Res] {
	const fn = "throttle.New"
	if isnil.Is(inner) {
		panic(fn + ": nil inner service")
	}
	if accepted == nil {
		panic(fn + ": nil accepted classifier")
	}
	o := newOptions(fn, opts)
	t := &Throttle[Req, Res]{inner: inner, accepted: accepted, k: o.k, most: o.maxReject, rand: o.rand, sink: o.sink}
	t.w.init(o.window)
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
// once, even if ctx is done, a permit whose Call fails with ErrThrottled.
// Otherwise it waits for the inner Ready and returns a permit that wraps
// the inner one; an inner error is returned unchanged and not counted.
func (t *Throttle[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	if p := t.RejectionProbability(); p > 0 && t.rand.Float64() < p {
		return tower.NewPermit[Req, Res]((*rejecter[Req, Res])(t), 0), nil
	}
	inner, err := t.inner.Ready(ctx)
	if err != nil {
		return inner, err
	}
	return t.wraps.Wrap((*wrapper[Req, Res])(t), inner), nil
}

// RejectionProbability returns the probability with which a request would
// be rejected now, cap included.
func (t *Throttle[Req, Res]) RejectionProbability() float64 {
	requests, accepts := t.w.counts()
	r := float64(requests)
	p := (r - t.k*float64(accepts)) / (r + 1)
	return min(max(p, 0), t.most)
}

// wrapper is the Throttle's tower.Wrapper, kept off its method set.
type wrapper[Req, Res any] Throttle[Req, Res]

// CallWrapped sends the request and counts it as accepted says, unless
// it failed while ctx was cancelled. A panic leaves it uncounted.
func (w *wrapper[Req, Res]) CallWrapped(ctx context.Context, inner tower.Permit[Req, Res], req Req) (Res, error) {
	res, err := inner.Call(ctx, req)
	if err != nil && ctx.Err() == context.Canceled {
		return res, err
	}
	w.w.add(w.accepted(res, err))
	return res, err
}

// ReleaseWrapped releases the inner permit, uncounted.
func (*wrapper[Req, Res]) ReleaseWrapped(inner tower.Permit[Req, Res]) { inner.Release() }

// rejecter serves the permits of rejected requests. It holds nothing; it
// is the Throttle only to reach its window and sink.
type rejecter[Req, Res any] Throttle[Req, Res]

// CallReserved counts a request not accepted, reports it to the sink, and
// fails it with ErrThrottled.
func (r *rejecter[Req, Res]) CallReserved(context.Context, uint64, Req) (Res, error) {
	r.w.add(false)
	if r.sink != nil {
		r.sink.Add(metrics.Throttled, 1)
	}
	var zero Res
	return zero, ErrThrottled
}

// ReleaseReserved does nothing: a rejecting permit released unused
// rejected nobody.
func (*rejecter[Req, Res]) ReleaseReserved(uint64) {}
