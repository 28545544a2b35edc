package balance

import (
	"context"

	"github.com/towergo/tower"
)

// ejectable wraps an endpoint for outlier detection: its permits classify
// the calls' results, and while it is ejected its Ready waits. It has the
// inner endpoint's Load, for a P2C (a RoundRobin never asks for it).
type ejectable[K comparable, Req, Res any, S tower.Service[Req, Res]] struct {
	st     outlierState[K]
	d      *detector[K]
	inner  S
	load   interface{ Load() float64 }
	failed func(Res, error) bool
	wraps  tower.WrapPool[Req, Res]
}

// initOutlier sets b up to wrap its endpoints for outlier detection, and
// returns the cache's removal handler, which hands onRemove, if not nil,
// the endpoint unwrapped.
func (b *balancer[K, Req, Res, S]) initOutlier(fn string, onRemove func(K, S)) func(K, S) {
	failed := as[func(Res, error) bool](fn, "outlier detection's classifier", b.o.outlier.failure)
	d := newDetector(*b.o.outlier, b.o.sink, b.report, func(k K) bool { return b.cache.Repoll(k) })
	b.detector = d
	b.wrap = func(k K, s S) S {
		w := &ejectable[K, Req, Res, S]{st: outlierState[K]{key: k}, d: d, inner: s, failed: failed}
		w.load, _ = any(s).(interface{ Load() float64 })
		d.add(&w.st)
		return any(w).(S)
	}
	return func(k K, s S) {
		w := any(s).(*ejectable[K, Req, Res, S])
		if onRemove != nil {
			defer onRemove(k, w.inner)
		}
		d.forget(&w.st)
	}
}

// Ready waits while the endpoint is ejected, then asks the endpoint. A
// permit granted while an ejection began is given back, and Ready waits
// again.
func (w *ejectable[K, Req, Res, S]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	for {
		if w.st.out.Load() {
			if err := w.d.waitOut(ctx, &w.st); err != nil {
				return tower.Permit[Req, Res]{}, err
			}
		}
		p, err := w.inner.Ready(ctx)
		if err != nil {
			return p, err
		}
		if !w.st.out.Load() {
			return w.wraps.Wrap((*ejectWrapper[K, Req, Res, S])(w), p), nil
		}
		p.Release()
	}
}

// Load returns the endpoint's load.
func (w *ejectable[K, Req, Res, S]) Load() float64 { return w.load.Load() }

// ejectWrapper is ejectable's tower.Wrapper, kept off its method set.
type ejectWrapper[K comparable, Req, Res any, S tower.Service[Req, Res]] ejectable[K, Req, Res, S]

// CallWrapped calls the endpoint and counts the result. A call that panics
// is not counted: the panic goes on up to the caller.
func (w *ejectWrapper[K, Req, Res, S]) CallWrapped(ctx context.Context, inner tower.Permit[Req, Res], req Req) (Res, error) {
	epoch := w.st.epoch.Load()
	res, err := inner.Call(ctx, req)
	w.d.record(&w.st, epoch, w.failed(res, err), err)
	return res, err
}

func (w *ejectWrapper[K, Req, Res, S]) ReleaseWrapped(inner tower.Permit[Req, Res]) { inner.Release() }
