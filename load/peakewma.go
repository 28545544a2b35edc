package load

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
)

// PeakEwma is a service whose load is its expected latency times its
// requests in flight, estimate × (pending + 1) in nanoseconds: tower's
// PeakEwma. The round-trip time (RTT) estimate starts at a default, so an
// endpoint without history is neither avoided nor flooded. Each completed
// request's RTT, errors included, updates it: an RTT above the estimate
// replaces it at once (the peak); a lower one is folded in as an EWMA,
// estimate×w + rtt×(1−w) with w = exp(−Δt/decay), Δt the time since the
// last update. Reading the load is an update with an RTT of zero, so an
// endpoint that gets no requests decays towards zero and is tried again.
//
// A PeakEwma is safe for concurrent use; make one with [NewPeakEwma].
type PeakEwma[Req, Res any] struct {
	inner      tower.Service[Req, Res]
	decay      float64 // ns
	completion Completion[Res]
	pending    atomic.Int64
	wraps      tower.WrapPool[Req, Res]

	mu      sync.Mutex
	rtt     float64   // the estimate, ns
	updated time.Time // when rtt was last updated
}

// NewPeakEwma returns inner with its load estimated by Peak-EWMA, starting
// from an RTT of defaultRTT and decaying with a time constant of decay
// (Linkerd uses 30ms and 10s). It panics if inner or an option is nil (or
// inner holds a nil pointer), or if defaultRTT or decay is not positive.
func NewPeakEwma[Req, Res any](inner tower.Service[Req, Res], defaultRTT, decay time.Duration, opts ...Option[Res]) *PeakEwma[Req, Res] {
	const fn = "load.NewPeakEwma"
	if isnil.Is(inner) {
		panic(fn + ": inner is nil")
	}
	validatePeakEwma(fn, defaultRTT, decay)
	o := newOptions(fn, opts)
	return &PeakEwma[Req, Res]{
		inner:      inner,
		decay:      float64(decay),
		completion: o.completion,
		rtt:        float64(defaultRTT),
		updated:    time.Now(),
	}
}

// NewPeakEwmaLayer returns a Layer that gives each service it wraps a
// PeakEwma load of its own, with the arguments of [NewPeakEwma]. It panics
// if defaultRTT or decay is not positive or an option is nil.
func NewPeakEwmaLayer[Req, Res any](defaultRTT, decay time.Duration, opts ...Option[Res]) tower.Layer[Req, Res] {
	const fn = "load.NewPeakEwmaLayer"
	validatePeakEwma(fn, defaultRTT, decay) // now, not when the layer is used
	newOptions(fn, opts)
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return NewPeakEwma(inner, defaultRTT, decay, opts...)
	})
}

func validatePeakEwma(fn string, defaultRTT, decay time.Duration) {
	option.PanicIf(defaultRTT <= 0, "%s: defaultRTT must be positive, got %v", fn, defaultRTT)
	option.PanicIf(decay <= 0, "%s: decay must be positive, got %v", fn, decay)
}

// Ready waits for the inner service and returns its permit wrapped, so that
// the call is measured. An inner error is returned unchanged.
func (p *PeakEwma[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	q, err := p.inner.Ready(ctx)
	if err != nil {
		return q, err
	}
	return p.wraps.Wrap((*ewmaWrapper[Req, Res])(p), q), nil
}

// Load returns the cost, estimate × (pending + 1), in nanoseconds.
func (p *PeakEwma[Req, Res]) Load() float64 {
	pending := p.pending.Load()
	now := time.Now()
	return p.update(now, now) * float64(pending+1)
}

// update folds the RTT of a request sent at sent and answered at now (a
// read of the load: sent at now) into the estimate, and returns it.
func (p *PeakEwma[Req, Res]) update(sent, now time.Time) float64 {
	p.mu.Lock()
	rtt := nanos(now.Sub(sent))
	if p.rtt < rtt {
		p.rtt = rtt // a peak
	} else {
		w := math.Exp(-nanos(now.Sub(p.updated)) / p.decay)
		// The conversions round each product, so that the compiler does
		// not fuse them into one FMA and the result is tower's to the bit.
		p.rtt = float64(p.rtt*w) + float64(rtt*(1-w))
	}
	p.updated = now
	estimate := p.rtt
	p.mu.Unlock()
	return estimate
}

// nanos returns d in nanoseconds, or 0 if d is negative.
func nanos(d time.Duration) float64 { return float64(max(d, 0)) }

// ewmaWrapper is PeakEwma's tower.Wrapper and completer, off its method set.
type ewmaWrapper[Req, Res any] PeakEwma[Req, Res]

func (w *ewmaWrapper[Req, Res]) CallWrapped(ctx context.Context, inner tower.Permit[Req, Res], req Req) (Res, error) {
	sent := time.Now()
	w.pending.Add(1)
	if w.completion == nil {
		defer w.complete(sent) // deferred: a call that panics is done too
		return inner.Call(ctx, req)
	}
	return callTracked(ctx, inner, req, w.completion, w, sent)
}

func (w *ewmaWrapper[Req, Res]) ReleaseWrapped(inner tower.Permit[Req, Res]) { inner.Release() }

// complete ends a request sent at sent: its RTT updates the estimate, and
// then it stops counting as pending.
func (w *ewmaWrapper[Req, Res]) complete(sent time.Time) {
	(*PeakEwma[Req, Res])(w).update(sent, time.Now())
	w.pending.Add(-1)
}
