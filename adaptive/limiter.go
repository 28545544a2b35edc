package adaptive

import (
	"context"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
)

// Limiter is middleware that limits the requests in flight in the inner
// service to a limit that an [Algorithm] moves with the calls' latencies
// and drops (see the package doc).
//
// A Limiter is safe for concurrent use. Build one with [New]. Req and Res
// are the request and response types.
type Limiter[Req, Res any] struct {
	g     gate
	inner tower.Service[Req, Res]
	wraps tower.WrapPool[Req, Res]
}

// New returns inner wrapped in a Limiter with opts, whose limit moves by
// the algorithm newAlg makes: [Gradient2], [Vegas] or [AIMD], or a
// function that returns a user's own Algorithm. It panics if inner (a
// typed nil too), newAlg, what it returns or an option is nil, or if the
// initial limit is outside the bounds.
func New[Req, Res any](inner tower.Service[Req, Res], newAlg func() Algorithm, opts ...Option) *Limiter[Req, Res] {
	option.PanicIf(isnil.Is(inner), "adaptive.New: inner is nil")
	return newLimiter(inner, algorithm("adaptive.New", newAlg), newOptions("adaptive.New", opts))
}

// algorithm returns what newAlg makes, and panics if either is nil.
func algorithm(fn string, newAlg func() Algorithm) Algorithm {
	if newAlg == nil {
		panic(fn + ": newAlg is nil")
	}
	alg := newAlg()
	if isnil.Is(alg) {
		panic(fn + ": newAlg returned nil")
	}
	return alg
}

func newLimiter[Req, Res any](inner tower.Service[Req, Res], alg Algorithm, o options) *Limiter[Req, Res] {
	l := &Limiter[Req, Res]{inner: inner}
	g := &l.g
	g.reserve, g.sink, g.dropped, g.maxWaiting, g.toDeadline = o.reserve, o.sink, o.dropped, o.maxWaiting, o.toDeadline
	g.stride.Store(1)
	g.w = window{
		alg: alg, own: o.own, limit: float64(o.initial), min: o.min, max: o.max,
		length: o.window, minSamples: o.minSamples, start: now(),
	}
	g.w.run = make([]time.Duration, 0, g.w.few())
	if p, ok := alg.(Prober); ok {
		g.w.prober = p
		g.startProbeLocked() // nobody else holds g yet
	}
	n := g.w.inForce()
	g.state.Store(uint64(n) << limitShift)
	if o.sink != nil {
		o.sink.Add(metrics.Limit, int64(n))
	}
	return l
}

// NewLayer returns a Layer that wraps each service in a Limiter with opts
// and an algorithm of its own from newAlg. newAlg is called once now, to
// check it, and once per service wrapped. It panics as [New] does.
func NewLayer[Req, Res any](newAlg func() Algorithm, opts ...Option) tower.Layer[Req, Res] {
	algorithm("adaptive.NewLayer", newAlg)
	o := newOptions("adaptive.NewLayer", opts) // now, not when the layer is used
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		option.PanicIf(isnil.Is(inner), "adaptive.NewLayer: inner is nil")
		return newLimiter(inner, algorithm("adaptive.NewLayer", newAlg), o)
	})
}

// Limit returns the limit in force, as a snapshot: the algorithm's,
// rounded down, or during a probe the probe's (see [Prober]).
func (l *Limiter[Req, Res]) Limit() int { return l.g.limit() }

// InFlight returns the number of requests in flight, of every priority,
// as a snapshot. It is never above Limit, except when the limit has just
// come down below the requests already in flight.
func (l *Limiter[Req, Res]) InFlight() int { return l.g.inFlight() }

// Waiting returns the number of callers waiting in Ready for a permit, as
// a snapshot.
func (l *Limiter[Req, Res]) Waiting() int {
	l.g.mu.Lock()
	defer l.g.mu.Unlock()
	return l.g.waiting
}

// Ready waits for a permit for the priority ctx carries
// ([tower.PriorityFrom]), and only then for the inner service, so a
// waiting caller holds nothing of the inner service's. A free permit is
// taken even if ctx is done. If ctx ends first, Ready returns ctx.Err();
// if the inner Ready fails, the permit is given back and its error
// returned. A caller refused (see the package doc) gets a permit whose
// Call fails with loadshed.ErrOverloaded.
func (l *Limiter[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	c := class(tower.PriorityFrom(ctx))
	seq, ok := l.g.take(c, true)
	if !ok {
		var err error
		ok, seq, err = l.g.acquire(ctx, c)
		if err != nil {
			return tower.Permit[Req, Res]{}, err
		}
		if !ok { // shed
			return tower.NewPermit[Req, Res]((*wrapper[Req, Res])(l), 0), nil
		}
	}
	held := true
	defer func() {
		if held { // the inner service failed, or it or the sink panicked
			l.release()
		}
	}()
	if l.g.sink != nil {
		l.g.sink.Add(metrics.InFlight, 1)
	}
	p, err := l.inner.Ready(ctx)
	if err != nil {
		return p, err
	}
	held = false
	var timed uint64
	if seq&(uint64(l.g.stride.Load())-1) == 0 { // one grant in stride is timed
		timed = 1
	}
	return l.wraps.WrapNoted((*wrapper[Req, Res])(l), p, timed), nil
}

// release gives a permit back, after telling the sink, so that InFlight
// never shows more than the limit.
func (l *Limiter[Req, Res]) release() {
	if l.g.sink != nil {
		defer l.g.release()
		l.g.sink.Add(metrics.InFlight, -1)
		return
	}
	l.g.release()
}

// wrapper is the Limiter's tower.NotedWrapper, whose note is 1 if the
// call is to be timed, and the tower.Reserver of shed callers' permits,
// which hold nothing; kept off its method set.
type wrapper[Req, Res any] Limiter[Req, Res]

func (w *wrapper[Req, Res]) CallNoted(ctx context.Context, inner tower.Permit[Req, Res], timed uint64, req Req) (res Res, err error) {
	l := (*Limiter[Req, Res])(w)
	var start time.Duration
	inflight := -1 // not timed
	if timed != 0 {
		inflight, start = l.g.inFlight(), now()
	}
	ended := false
	defer func() {
		if !ended { // a panic: the permit goes back, and the call tells nothing
			l.release()
		}
	}()
	res, err = inner.Call(ctx, req)
	ended = true
	l.done(ctx, start, inflight, err)
	return res, err
}

func (w *wrapper[Req, Res]) ReleaseNoted(inner tower.Permit[Req, Res], _ uint64) {
	defer (*Limiter[Req, Res])(w).release()
	inner.Release()
}

// done accounts for a call with ctx that ended with err, timed from start
// if inflight >= 0, and gives its permit back.
func (l *Limiter[Req, Res]) done(ctx context.Context, start time.Duration, inflight int, err error) {
	g := &l.g
	o := answered
	var end time.Duration
	if inflight >= 0 {
		end = now()
	}
	if err != nil {
		o = g.classify(ctx, err, inflight >= 0, end-start)
	}
	if o == ignored || (o == answered && inflight < 0) {
		l.release()
		return
	}
	if inflight < 0 {
		end = now()
	}
	if o == drop {
		inflight = max(inflight, g.inFlight())
	}
	// First, so that an algorithm that panics leaks nothing.
	l.release()
	if delta := g.observe(end, end-start, o, inflight); delta != 0 && g.sink != nil {
		g.sink.Add(metrics.Limit, int64(delta))
	}
}

func (w *wrapper[Req, Res]) CallReserved(context.Context, uint64, Req) (Res, error) {
	if w.g.sink != nil {
		w.g.sink.Add(metrics.Shed, 1)
	}
	var zero Res
	return zero, loadshed.ErrOverloaded
}

func (*wrapper[Req, Res]) ReleaseReserved(uint64) {}
