package stack

import (
	"context"
	"errors"
	"slices"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
)

// A Builder collects layers, the first added outermost, and applies them
// to a service, as [tower.Builder] does, with a method for each middleware
// of this module, so that its type arguments are given once, to [New].
//
// A Builder is an immutable value: each method returns a new Builder and
// leaves the receiver as it was, so a partly built stack can be shared
// and extended in different ways. Builders extended from one share the
// layer values it had. That shares no state for most of them: each service
// a layer wraps gets a limit, a window or a queue of its own. But a Buffer
// layer keeps the Buffers it made, to close them, so the Close of any
// Builder that has it closes them all.
//
// A Builder is itself a [tower.Layer], so it can be given wherever one
// layer is taken: to towerhttp.NewHandler, to another adapter, or to
// another Builder's Layer.
//
// The zero Builder is ready to use and applies no layers.
type Builder[Req, Res any] struct {
	layers []tower.Layer[Req, Res]
	// owned is what the builder's methods made that outlives requests,
	// to be closed by Close: the Buffer layers.
	owned []closer
}

// A closer is a layer that holds what outlives a request, such as
// buffer.Layer, which holds the Buffers it made until they are closed.
type closer interface {
	Close() error
	Shutdown(ctx context.Context) error
}

// New returns an empty Builder for services that take Req and return Res.
// It exists so that the type arguments are given once, at the start of a
// chain.
func New[Req, Res any]() Builder[Req, Res] { return Builder[Req, Res]{} }

// Layer returns a Builder with l added inside the layers added so far:
// a layer of one's own, or one this package has no method for. A Builder
// given as l brings what it owns along: the Close of the Builder returned
// closes its Buffers too. Any other layer with a Close method remains the
// caller's to close. Layer panics if l is nil (or holds a nil pointer).
func (b Builder[Req, Res]) Layer(l tower.Layer[Req, Res]) Builder[Req, Res] {
	if isnil.Is(l) {
		panic("stack.Builder.Layer: nil Layer")
	}
	if inner, ok := l.(Builder[Req, Res]); ok {
		b.owned = append(slices.Clip(b.owned), inner.owned...)
	}
	return b.with(l)
}

// with returns a Builder with l added innermost. It clips the slice it
// appends to, so that the receiver's array is never written to: two
// Builders extended from one each get an array of their own.
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

// ServiceFunc returns f, as a [tower.ServiceFunc], wrapped in the
// builder's layers: a function is the usual leaf of a stack, and this
// saves the type arguments its conversion would take. It panics if f is
// nil.
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

// Close closes what the builder's layers hold beyond a request: every
// Buffer that a Buffer layer of the builder made, for every service the
// builder wrapped (a towerhttp.Transport wraps one per host), waiting for
// each as buffer.Layer's Close does. From then on their callers get
// buffer.ErrClosed. Builders extended from one share the Buffer layers it
// had, so the Close of any of them closes those layers' Buffers, whoever
// made them. A stack without a Buffer holds nothing, and Close does
// nothing.
//
// Close returns the errors of the layers it closed, joined; the Buffer
// layers of this module return none. It may be called any number of
// times, and with Shutdown.
func (b Builder[Req, Res]) Close() error {
	var err error
	for _, c := range b.owned {
		err = errors.Join(err, c.Close())
	}
	return err
}

// Shutdown does what Close does, but waits only as long as ctx lasts, as
// net/http's Server.Shutdown does: it returns nil once no request of the
// builder's Buffers waits in an inner service's Ready, or ctx.Err() if ctx
// ends first. Every Buffer is stopped even then; a later Close or Shutdown
// waits for those not yet done.
func (b Builder[Req, Res]) Shutdown(ctx context.Context) error {
	var first error
	for _, c := range b.owned {
		// On: a Shutdown given a done ctx still stops its layer's Buffers,
		// which is what the callers of those layers need.
		if err := c.Shutdown(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

var _ tower.Layer[int, int] = Builder[int, int]{}
