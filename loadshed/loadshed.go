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

// ErrOverloaded is the error of a shed request: "service overloaded", as in
// tower. Its Overloaded method returns true, which is how
// [tower.IsOverloaded] and the adapters (towerhttp answers 503) recognise
// it; a user's error with that method is treated alike.
var ErrOverloaded error = overloaded{}

type overloaded struct{}

func (overloaded) Error() string    { return "service overloaded" }
func (overloaded) Overloaded() bool { return true }

// LoadShed is middleware that sheds the requests the inner service cannot
// take now; see the package doc. Ready asks the inner service with a done
// context that carries the request's priority (see [tower.ReadyNowFor]),
// so that a limit that keeps room for higher priorities sheds the lower
// ones first. A shedding permit holds nothing. An inner service that is
// broken fails Ready with its error.
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
// it sheds, so that a burst a permit freed within d would serve is not
// refused, while nobody waits longer than d for a service that stays full.
// A caller whose ctx ends first gets ctx's error; one whose ctx is already
// done (a "ready now?" probe) is shed at once. The wait costs a timer only
// when the inner service is not ready at once. The default, 0, sheds at
// once, as tower does. It panics if d is negative.
func WithPatience(d time.Duration) Option {
	if d < 0 {
		panic(fmt.Sprintf("loadshed.WithPatience: d must not be negative, got %v", d))
	}
	return func(o *options) { o.patience = d }
}

// WithMetrics makes the LoadShed report Shed +1 to sink for each request
// it sheds, when the shedding permit is called (one released unused shed
// nobody). The default, and a nil sink, is no metrics.
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

// Ready returns at once, even if ctx is done: with the inner service's
// permit if it was ready for a request of ctx's priority, or else with a
// permit that sheds. With patience, it first waits up to the patience,
// unless ctx is done.
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
