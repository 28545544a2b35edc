package stack

import (
	"context"
	"errors"
	"slices"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
)

// A Builder collects layers, the first added outermost, and applies them
// to a service. It is itself a [tower.Layer].
//
// A Builder is an immutable value: each method returns a new Builder, so a
// partly built stack can be shared and extended in different ways. Those
// share its layers, and so the Buffers a Buffer layer made, which the
// Close of any Builder with it closes.
//
// The zero Builder is ready to use and applies no layers.
type Builder[Req, Res any] struct {
	layers  []tower.Layer[Req, Res]
	buffers []*buffer.Layer[Req, Res] // the layers Close closes
}

// New returns an empty Builder for services that take Req and return Res.
func New[Req, Res any]() Builder[Req, Res] { return Builder[Req, Res]{} }

// Layer returns a Builder with l added inside the layers added so far. A
// Builder given as l brings its Buffers along, for the returned Builder's
// Close; any other layer with a Close method remains the caller's to
// close. Layer panics if l is nil (or holds a nil pointer).
func (b Builder[Req, Res]) Layer(l tower.Layer[Req, Res]) Builder[Req, Res] {
	option.PanicIf(isnil.Is(l), "stack.Builder.Layer: nil Layer")
	if inner, ok := l.(Builder[Req, Res]); ok {
		b.buffers = append(slices.Clip(b.buffers), inner.buffers...)
	}
	return b.with(l)
}

// with returns a Builder with l added innermost. Clipping leaves the
// receiver's array unwritten.
func (b Builder[Req, Res]) with(l tower.Layer[Req, Res]) Builder[Req, Res] {
	b.layers = append(slices.Clip(b.layers), l)
	return b
}

// Service returns inner wrapped in the builder's layers. It panics if
// inner is nil (or holds a nil pointer), or if a layer returns a nil
// Service.
func (b Builder[Req, Res]) Service(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
	option.PanicIf(isnil.Is(inner), "stack.Builder.Service: nil Service")
	return tower.Stack(b.layers...).Wrap(inner)
}

// ServiceFunc returns f wrapped in the builder's layers, saving the type
// arguments of a [tower.ServiceFunc] conversion. It panics if f is nil.
func (b Builder[Req, Res]) ServiceFunc(f tower.ServiceFunc[Req, Res]) tower.Service[Req, Res] {
	option.PanicIf(f == nil, "stack.Builder.ServiceFunc: nil func")
	return b.Service(f)
}

// Wrap is Service; it makes a Builder a [tower.Layer].
func (b Builder[Req, Res]) Wrap(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
	return b.Service(inner)
}

// Close closes every Buffer that the builder's Buffer layers made, for
// every service it wrapped, waiting for each as buffer.Layer's Close does;
// their callers then get buffer.ErrClosed. It returns the layers' errors
// joined, and may be called any number of times, and with Shutdown.
func (b Builder[Req, Res]) Close() error {
	var err error
	for _, l := range b.buffers {
		err = errors.Join(err, l.Close())
	}
	return err
}

// Shutdown does what Close does, but waits only as long as ctx lasts: it
// returns nil once no request of the builder's Buffers waits in an inner
// service's Ready, or ctx.Err() if ctx ends first. Every Buffer is stopped
// even then; a later Close or Shutdown waits for those not yet done.
func (b Builder[Req, Res]) Shutdown(ctx context.Context) error {
	var first error
	for _, l := range b.buffers { // go on after an error, to stop every Buffer
		if err := l.Shutdown(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

var _ tower.Layer[int, int] = Builder[int, int]{}
