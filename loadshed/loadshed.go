package loadshed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
)

// ErrOverloaded is the error of a request shed because the inner service was
// not ready. Its message is tower's, "service overloaded". Its method
// Overloaded answers true: that is how [tower.IsOverloaded] knows it, and
// the adapters that ask (towerhttp answers 503), so that an error of a
// user's own with the method is answered alike.
var ErrOverloaded error = overloaded{}

type overloaded struct{}

func (overloaded) Error() string    { return "service overloaded" }
func (overloaded) Overloaded() bool { return true }

// LoadShed is middleware that never makes a caller wait. Ready asks the
// inner service whether it can take a request now, with a done context
// that carries the request's priority (see [tower.ReadyNowFor]), so that a
// limit that keeps room for higher priorities sheds the lower ones first.
// If it can, the permit is the inner service's own. If it cannot, Ready
// still succeeds, and the permit's Call fails at once with ErrOverloaded
// without reaching the inner service, which has reserved nothing. An inner
// service that is broken fails Ready with its error.
//
// LoadShed sheds whenever the inner service is not ready at that instant,
// for whatever reason: it is meant to sit outside something that says "not
// ready" only when it is full, such as a concurrency limit. With
// [WithPatience], it waits a little first.
//
// A LoadShed is safe for concurrent use. Its zero value is not usable; call
// [New]. Req and Res are the request and response types.
type LoadShed[Req, Res any] struct {
	inner    tower.Service[Req, Res]
	sink     metrics.Sink  // nil: no metrics
	patience time.Duration // 0: shed at once
}

// An Option configures a LoadShed.
type Option func(*options)

type options struct {
	sink     metrics.Sink
	patience time.Duration
}

// WithPatience makes a LoadShed wait up to d for the inner service before
// it sheds a request: a caller that finds it not ready waits in its Ready,
// as without a LoadShed, and is shed only if it is still not ready after
// d. A burst that a permit freed within d would serve is then not refused
// (a limit that is full for an instant, one measuring its service at a low
// limit for a few milliseconds), while a caller still never waits longer
// than d for a service that stays full. A caller whose ctx ends first gets
// ctx's error; one whose ctx is already done (a "ready now?" probe) is
// shed at once, as without patience. The wait costs a timer, only when the
// inner service is not ready at once. The default, 0, sheds at once:
// tower's LoadShed. It panics if d is negative.
func WithPatience(d time.Duration) Option {
	if d < 0 {
		panic(fmt.Sprintf("loadshed.WithPatience: d must not be negative, got %v", d))
	}
	return func(o *options) { o.patience = d }
}

// WithMetrics makes the LoadShed report to sink: Shed +1 for each request
// it turns away, when the permit that sheds it is called (a shedding permit
// released unused turned nobody away). The default, and a nil sink, is no
// metrics: then the only cost is a nil check on the shedding path.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) { o.sink = sink }
}

// newOptions applies opts for the function named fn.
func newOptions(fn string, opts []Option) options {
	return option.Apply[options](fn, opts)
}

// New returns inner wrapped in a LoadShed, with opts. It panics if inner
// (a typed nil too) or an option is nil.
func New[Req, Res any](inner tower.Service[Req, Res], opts ...Option) *LoadShed[Req, Res] {
	if isnil.Is(inner) {
		panic("loadshed.New: nil inner service")
	}
	o := newOptions("loadshed.New", opts)
	return &LoadShed[Req, Res]{inner: inner, sink: o.sink, patience: o.patience}
}

// NewLayer returns a Layer that wraps each service in a LoadShed with
// opts. It panics if an option is nil; its Wrap panics if the service is
// nil.
func NewLayer[Req, Res any](opts ...Option) tower.Layer[Req, Res] {
	newOptions("loadshed.NewLayer", opts) // now, not when the layer is used
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return New(inner, opts...)
	})
}

// Ready returns at once, whether ctx is done or not: with the inner
// service's permit if it was ready for a request of ctx's priority, or with
// a permit that sheds the request if it was not. With patience, it waits
// for the inner service up to the patience first, unless ctx is done.
func (l *LoadShed[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	p, ok, err := tower.ReadyNowFor(ctx, l.inner)
	if err != nil || ok {
		return p, err
	}
	if l.patience > 0 && ctx.Err() == nil {
		return l.wait(ctx)
	}
	return l.shedPermit(), nil
}

// wait waits up to the patience for the inner service, and sheds if it is
// still not ready then.
func (l *LoadShed[Req, Res]) wait(ctx context.Context) (tower.Permit[Req, Res], error) {
	wctx, cancel := context.WithTimeout(ctx, l.patience)
	p, err := l.inner.Ready(wctx)
	cancel()
	switch {
	case err == nil:
		return p, nil
	case ctx.Err() != nil:
		return tower.Permit[Req, Res]{}, ctx.Err()
	case !errors.Is(err, context.DeadlineExceeded):
		return p, err // broken
	}
	return l.shedPermit(), nil
}

// shedPermit returns a permit that sheds its request.
func (l *LoadShed[Req, Res]) shedPermit() tower.Permit[Req, Res] {
	return tower.NewPermit[Req, Res]((*shed[Req, Res])(l), 0)
}

// shed serves the permits of requests that are shed. It holds nothing, and
// is a LoadShed only to reach its sink.
type shed[Req, Res any] LoadShed[Req, Res]

func (s *shed[Req, Res]) CallReserved(context.Context, uint64, Req) (Res, error) {
	if s.sink != nil {
		s.sink.Add(metrics.Shed, 1)
	}
	var zero Res
	return zero, ErrOverloaded
}

func (*shed[Req, Res]) ReleaseReserved(uint64) {}
