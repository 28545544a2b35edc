package stack

import (
	"context"
	"errors"
	"slices"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
)

// A Builder collects layers, the first added outermost, and applies them
// to a service, with a method for each middleware of this module, so that
// its type arguments are given once, to [New]. It is this module's one
// builder, and is itself a [tower.Layer].
//
// A Builder is an immutable value: each method returns a new Builder and
// leaves the receiver as it was, so a partly built stack can be shared
// and extended in different ways. Builders extended from one share the
// layer values it had. For most layers that shares no state (each service
// a layer wraps gets a limit, a window or a queue of its own), but a
// Buffer layer keeps the Buffers it made, so the Close of any Builder that
// has it closes them all.
//
// The zero Builder is ready to use and applies no layers.
type Builder[Req, Res any] struct {
	layers []tower.Layer[Req, Res]
	// owned holds the layers Close closes: the Buffer layers.
	owned []closer
}

// A closer is a layer that holds what outlives a request, such as
// buffer.Layer, which holds the Buffers it made until they are closed.
type closer interface {
	Close() error
	Shutdown(ctx context.Context) error
}

// New returns an empty Builder for services that take Req and return Res,
// so that the type arguments are given once, at the start of a chain.
func New[Req, Res any]() Builder[Req, Res] { return Builder[Req, Res]{} }

// Layer returns a Builder with l added inside the layers added so far: a
// layer of one's own, or one this package has no method for. A Builder
// given as l brings its Buffers along, for the returned Builder's Close;
// any other layer with a Close method remains the caller's to close. Layer
// panics if l is nil (or holds a nil pointer).
func (b Builder[Req, Res]) Layer(l tower.Layer[Req, Res]) Builder[Req, Res] {
	if isnil.Is(l) {
		panic("stack.Builder.Layer: nil Layer")
	}
	if inner, ok := l.(Builder[Req, Res]); ok {
		b.owned = append(slices.Clip(b.owned), inner.owned...)
	}
	return b.with(l)
}

// with returns a Builder with l added innermost. Clipping before append
// keeps the receiver's array unwritten, so two Builders extended from one
// each get their own.
func (b Builder[Req, Res]) with(l tower.Layer[Req, Res]) Builder[Req, Res] {
	b.layers = append(slices.Clip(b.layers), l)
	return b
}

// own returns b with l added innermost, and l kept to be closed by Close.
func (b Builder[Req, Res]) own(l interface {
	tower.Layer[Req, Res]
	closer
}) Builder[Req, Res] {
	b.owned = append(slices.Clip(b.owned), l)
	return b.with(l)
}

// Service returns inner wrapped in the builder's layers, the first added
// outermost. It panics if inner is nil (a nil interface, or a nil pointer
// in one), or if a layer returns a nil Service.
func (b Builder[Req, Res]) Service(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
	if isnil.Is(inner) {
		panic("stack.Builder.Service: nil Service")
	}
	return tower.Stack(b.layers...).Wrap(inner)
}

// ServiceFunc returns f wrapped in the builder's layers, saving the type
// arguments of a [tower.ServiceFunc] conversion. It panics if f is nil.
func (b Builder[Req, Res]) ServiceFunc(f tower.ServiceFunc[Req, Res]) tower.Service[Req, Res] {
	if f == nil {
		panic("stack.Builder.ServiceFunc: nil func")
	}
	return b.Service(f)
}

// Wrap is Service; it makes a Builder a [tower.Layer].
func (b Builder[Req, Res]) Wrap(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
	return b.Service(inner)
}

// Close closes every Buffer that a Buffer layer of the builder made, for
// every service the builder wrapped (a towerhttp.Transport wraps one per
// host), waiting for each as buffer.Layer's Close does; their callers then
// get buffer.ErrClosed. Builders extended from one share its Buffer
// layers, so any of them closes those layers' Buffers. Without a Buffer,
// Close does nothing.
//
// Close returns the layers' errors joined; this module's Buffer layers
// return none. It may be called any number of times, and with Shutdown.
func (b Builder[Req, Res]) Close() error {
	var err error
	for _, c := range b.owned {
		err = errors.Join(err, c.Close())
	}
	return err
}

// Shutdown does what Close does, but waits only as long as ctx lasts: it
// returns nil once no request of the builder's Buffers waits in an inner
// service's Ready, or ctx.Err() if ctx ends first. Every Buffer is stopped
// even then; a later Close or Shutdown waits for those not yet done.
func (b Builder[Req, Res]) Shutdown(ctx context.Context) error {
	var first error
	for _, c := range b.owned {
		// Go on after an error: a Shutdown given a done ctx still stops
		// its layer's Buffers.
		if err := c.Shutdown(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

var _ tower.Layer[int, int] = Builder[int, int]{}
