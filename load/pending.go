package load

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
)

// PendingRequests is a service whose load is the number of its requests in
// flight: tower's PendingRequests. A PendingRequests is safe for
// concurrent use; make one with [NewPendingRequests].
type PendingRequests[Req, Res any] struct {
	inner      tower.Service[Req, Res]
	completion Completion[Res]
	pending    atomic.Int64
	wraps      tower.WrapPool[Req, Res]
}

// NewPendingRequests returns inner with its pending requests counted. It
// panics if inner or an option is nil, or inner holds a nil pointer.
func NewPendingRequests[Req, Res any](inner tower.Service[Req, Res], opts ...Option[Res]) *PendingRequests[Req, Res] {
	option.PanicIf(isnil.Is(inner), "load.NewPendingRequests: inner is nil")
	o := newOptions("load.NewPendingRequests", opts)
	return &PendingRequests[Req, Res]{inner: inner, completion: o.completion}
}

// NewPendingRequestsLayer returns a Layer that counts the pending requests
// of each service it wraps, each with a count of its own. It panics if an
// option is nil.
func NewPendingRequestsLayer[Req, Res any](opts ...Option[Res]) tower.Layer[Req, Res] {
	newOptions("load.NewPendingRequestsLayer", opts) // now, not when the layer is used
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return NewPendingRequests(inner, opts...)
	})
}

// Ready waits for the inner service and returns its permit wrapped, so that
// the call is counted. An inner error is returned unchanged.
func (p *PendingRequests[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	q, err := p.inner.Ready(ctx)
	if err != nil {
		return q, err
	}
	return p.wraps.Wrap((*pendingWrapper[Req, Res])(p), q), nil
}

// Load returns the number of requests in flight.
func (p *PendingRequests[Req, Res]) Load() float64 { return float64(p.pending.Load()) }

// pendingWrapper is PendingRequests' tower.Wrapper and completer, off its
// method set.
type pendingWrapper[Req, Res any] PendingRequests[Req, Res]

func (w *pendingWrapper[Req, Res]) CallWrapped(ctx context.Context, inner tower.Permit[Req, Res], req Req) (Res, error) {
	w.pending.Add(1)
	if w.completion == nil {
		defer w.pending.Add(-1) // deferred: a call that panics is done too
		return inner.Call(ctx, req)
	}
	return callTracked(ctx, inner, req, w.completion, w, time.Time{})
}

func (w *pendingWrapper[Req, Res]) ReleaseWrapped(inner tower.Permit[Req, Res]) { inner.Release() }

func (w *pendingWrapper[Req, Res]) complete(time.Time) { w.pending.Add(-1) }
