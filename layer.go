package tower

import (
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
)

// A Layer wraps a service in middleware and returns the wrapped service.
// Layers keep Req and Res; a step that changes either is a generic function
// instead, because Go methods cannot have type parameters.
//
// A Layer should be reusable: wrapping two services gives two independent
// middleware instances unless the layer documents that they share state (a
// shared concurrency limit, for instance).
type Layer[Req, Res any] interface {
	// Wrap returns inner wrapped in the layer's middleware.
	Wrap(inner Service[Req, Res]) Service[Req, Res]
}

// LayerFunc adapts an ordinary function to a [Layer].
type LayerFunc[Req, Res any] func(inner Service[Req, Res]) Service[Req, Res]

// Wrap returns f(inner).
func (f LayerFunc[Req, Res]) Wrap(inner Service[Req, Res]) Service[Req, Res] { return f(inner) }

// Stack returns a Layer that applies layers in order, the first one
// outermost: it sees the request first, and the last one sits directly
// around the wrapped service. Stack with no layers returns the service
// unchanged. It panics if a layer is nil, and its Wrap panics, naming the
// layer, if one returns a nil Service.
func Stack[Req, Res any](layers ...Layer[Req, Res]) Layer[Req, Res] {
	for i, l := range layers {
		option.PanicIf(isnil.Is(l), "tower.Stack: layer %d is nil", i)
	}
	return stack[Req, Res](append([]Layer[Req, Res](nil), layers...))
}

type stack[Req, Res any] []Layer[Req, Res]

func (s stack[Req, Res]) Wrap(inner Service[Req, Res]) Service[Req, Res] {
	for i := len(s) - 1; i >= 0; i-- {
		inner = s[i].Wrap(inner)
		option.PanicIf(isnil.Is(inner), "tower: layer %d (%T) returned a nil Service", i, s[i])
	}
	return inner
}
