package filter

import (
	"context"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
)

// A Predicate returns the request to send to the inner service, or an
// error that rejects it. It must be safe for concurrent use.
type Predicate[Req any] func(req Req) (Req, error)

// An AsyncPredicate is a [Predicate] that gets the call's ctx, so it may
// call other services under the request's deadline.
type AsyncPredicate[Req any] func(ctx context.Context, req Req) (Req, error)

// Filter is middleware that runs a predicate on each request, as the
// package doc says. A Filter is safe for concurrent use. Its zero value is
// not usable; build one with [New] or [NewAsync].
type Filter[Req, Res any] struct {
	inner tower.Service[Req, Res]
	pred  AsyncPredicate[Req]
	wraps tower.WrapPool[Req, Res]
}

// New returns inner wrapped in a Filter that runs pred on each request. It
// panics if inner (a typed nil too) or pred is nil.
func New[Req, Res any](inner tower.Service[Req, Res], pred Predicate[Req]) *Filter[Req, Res] {
	check("filter.New", inner, pred)
	return &Filter[Req, Res]{inner: inner, pred: func(_ context.Context, req Req) (Req, error) { return pred(req) }}
}

// NewAsync returns inner wrapped in a Filter that runs pred, with the
// call's ctx, on each request. It panics if inner (a typed nil too) or pred
// is nil.
func NewAsync[Req, Res any](inner tower.Service[Req, Res], pred AsyncPredicate[Req]) *Filter[Req, Res] {
	check("filter.NewAsync", inner, pred)
	return &Filter[Req, Res]{inner: inner, pred: pred}
}

// check panics, naming fn, if pred or inner is nil.
func check(fn string, inner, pred any) {
	if isnil.Is(pred) {
		panic(fn + ": nil predicate")
	}
	if isnil.Is(inner) {
		panic(fn + ": nil inner service")
	}
}

// NewLayer returns a Layer that wraps each service in a Filter that runs
// pred. It panics if pred is nil.
func NewLayer[Req, Res any](pred Predicate[Req]) tower.Layer[Req, Res] {
	option.PanicIf(isnil.Is(pred), "filter.NewLayer: nil predicate")
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return New(inner, pred)
	})
}

// NewAsyncLayer returns a Layer that wraps each service in a Filter that
// runs pred with the call's ctx. It panics if pred is nil.
func NewAsyncLayer[Req, Res any](pred AsyncPredicate[Req]) tower.Layer[Req, Res] {
	option.PanicIf(isnil.Is(pred), "filter.NewAsyncLayer: nil predicate")
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return NewAsync(inner, pred)
	})
}

// Ready waits for the inner service and returns its permit wrapped so that
// the call runs the predicate first.
func (f *Filter[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	p, err := f.inner.Ready(ctx)
	if err != nil {
		return p, err
	}
	return f.wraps.Wrap((*wrapper[Req, Res])(f), p), nil
}

// wrapper is Filter's tower.Wrapper, kept off Filter's method set.
type wrapper[Req, Res any] Filter[Req, Res]

func (w *wrapper[Req, Res]) CallWrapped(ctx context.Context, inner tower.Permit[Req, Res], req Req) (Res, error) {
	// A rejection or a panic gives the reservation back.
	defer inner.Release()
	req, err := w.pred(ctx, req)
	if err != nil {
		var zero Res
		return zero, err
	}
	return inner.Call(ctx, req)
}

func (w *wrapper[Req, Res]) ReleaseWrapped(inner tower.Permit[Req, Res]) { inner.Release() }
