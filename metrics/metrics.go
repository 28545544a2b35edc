package metrics

import (
	"context"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/mono"
	"github.com/towergo/tower/internal/option"
)

// New returns inner wrapped in a layer that reports to sink: InFlight, +1
// when inner's Ready grants a permit and -1 when the call returns (with a
// response, an error or a panic) or the permit is released unused; and,
// through Observe, the latency of every call, from the start of Call to its
// return, with its [OutcomeOf] the call's error (OutcomeError for a panic).
// Ready is not timed. The layer's permits allocate nothing once warm. New
// panics if inner or sink is nil (a typed nil too).
func New[Req, Res any](inner tower.Service[Req, Res], sink Sink) tower.Service[Req, Res] {
	option.PanicIf(isnil.Is(inner), "metrics.New: nil inner service")
	option.PanicIf(isnil.Is(sink), "metrics.New: nil sink")
	return &service[Req, Res]{inner: inner, sink: sink}
}

// NewLayer returns a Layer that wraps each service in the metrics layer of
// [New], all of them reporting to sink. It panics if sink is nil (a typed
// nil too).
func NewLayer[Req, Res any](sink Sink) tower.Layer[Req, Res] {
	option.PanicIf(isnil.Is(sink), "metrics.NewLayer: nil sink")
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return New(inner, sink)
	})
}

// service is the metrics layer.
type service[Req, Res any] struct {
	inner tower.Service[Req, Res]
	sink  Sink
	wraps tower.WrapPool[Req, Res]
}

func (s *service[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	p, err := s.inner.Ready(ctx)
	if err != nil {
		return p, err
	}
	// A sink that panics here sends the panic on up to the caller, which
	// never gets the permit: inner's goes back first.
	guard.Undo(func() { s.sink.Add(InFlight, 1) }, func() { p.Release() })
	return s.wraps.Wrap((*wrapper[Req, Res])(s), p), nil
}

// wrapper is the layer's tower.Wrapper, kept off its method set.
type wrapper[Req, Res any] service[Req, Res]

func (w *wrapper[Req, Res]) CallWrapped(ctx context.Context, inner tower.Permit[Req, Res], req Req) (res Res, err error) {
	start, outcome := mono.Now(), OutcomeError // a panic leaves it an error
	defer func() {                             // deferred, so that a panicking call is counted out too
		w.sink.Observe(mono.Now()-start, outcome)
		w.sink.Add(InFlight, -1)
	}()
	res, err = inner.Call(ctx, req)
	outcome = OutcomeOf(err)
	return res, err
}

// ReleaseWrapped releases inner and counts the permit out, even if inner's
// Release panics: the permit is given up either way.
func (w *wrapper[Req, Res]) ReleaseWrapped(inner tower.Permit[Req, Res]) {
	defer w.sink.Add(InFlight, -1)
	inner.Release()
}
