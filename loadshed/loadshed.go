package loadshed

import (
	"context"
	"errors"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
)

// ErrOverloaded is the error of a shed request: "service overloaded", as in
// tower. Its Overloaded method returns true, by which [tower.IsOverloaded]
// and the adapters (towerhttp answers 503) recognise it.
var ErrOverloaded error = overloaded{}

type overloaded struct{}

func (overloaded) Error() string    { return "service overloaded" }
func (overloaded) Overloaded() bool { return true }

// LoadShed is middleware that sheds the requests the inner service cannot
// take now, as the package doc says. A LoadShed is safe for concurrent use.
// Its zero value is not usable; call [New].
type LoadShed[Req, Res any] struct {
	inner tower.Service[Req, Res]
	options
}

// An Option configures a LoadShed.
type Option func(*options)

type options struct {
	sink     metrics.Sink  // nil: no metrics
	patience time.Duration // 0: shed at once
}

// WithPatience makes a LoadShed wait up to d for the inner service before
// it sheds, so that a burst that passes within d is served, not refused.
// A caller whose ctx ends first gets ctx's error; one whose ctx is already
// done (a "ready now?" probe) is shed at once. The default, 0, sheds at
// once, as tower does. It panics if d is negative.
func WithPatience(d time.Duration) Option {
	option.PanicIf(d < 0, "loadshed.WithPatience: d must not be negative, got %v", d)
	return func(o *options) { o.patience = d }
}

// WithMetrics makes the LoadShed report Shed +1 to sink for each request
// it sheds, when its permit is called. The default, and a nil sink, is no
// metrics.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) { o.sink = sink }
}

// New returns inner wrapped in a LoadShed, with opts. It panics if inner
// (a typed nil too) or an option is nil.
func New[Req, Res any](inner tower.Service[Req, Res], opts ...Option) *LoadShed[Req, Res] {
	option.PanicIf(isnil.Is(inner), "loadshed.New: nil inner service")
	return &LoadShed[Req, Res]{inner: inner, options: option.Apply[options]("loadshed.New", opts)}
}

// NewLayer returns a Layer that wraps each service in a LoadShed with
// opts. It panics if an option is nil, and its Wrap if the service is.
func NewLayer[Req, Res any](opts ...Option) tower.Layer[Req, Res] {
	option.Apply[options]("loadshed.NewLayer", opts) // now, not when the layer is used
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return New(inner, opts...)
	})
}

// Ready returns at once, even if ctx is done: with the inner service's
// permit if it is ready for a request of ctx's priority ([tower.ReadyNowFor]:
// a limit that keeps room for higher priorities sheds the lower ones), or
// else with a permit that sheds, after waiting up to the patience unless
// ctx is done. A broken inner service fails Ready with its error.
func (l *LoadShed[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	p, ok, err := tower.ReadyNowFor(ctx, l.inner)
	if err != nil || ok {
		return p, err
	}
	if l.patience > 0 && ctx.Err() == nil {
		wctx, cancel := context.WithTimeout(ctx, l.patience)
		p, err = l.inner.Ready(wctx)
		cancel()
		switch {
		case err == nil:
			return p, nil
		case ctx.Err() != nil:
			return tower.Permit[Req, Res]{}, ctx.Err()
		case !errors.Is(err, context.DeadlineExceeded):
			return p, err // broken
		}
	}
	return tower.NewPermit[Req, Res]((*shed[Req, Res])(l), 0), nil
}

// shed serves the permits of shed requests, and is a LoadShed for its sink.
type shed[Req, Res any] LoadShed[Req, Res]

func (s *shed[Req, Res]) CallReserved(context.Context, uint64, Req) (Res, error) {
	if s.sink != nil {
		s.sink.Add(metrics.Shed, 1)
	}
	var zero Res
	return zero, ErrOverloaded
}

func (*shed[Req, Res]) ReleaseReserved(uint64) {}
