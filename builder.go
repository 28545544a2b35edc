package tower

import "github.com/towergo/tower/internal/isnil"

// A Builder collects layers, the first added outermost, and applies them to a
// service. It is an immutable value: Layer returns a new Builder and leaves
// the receiver as it was, so a partly built stack can be shared and extended
// in different ways. A Builder is itself a [Layer]. Package stack's Builder
// has a method for each middleware of this module, so that the type
// arguments are given once.
//
// The zero Builder is ready to use and applies no layers.
type Builder[Req, Res any] struct {
	layers []Layer[Req, Res]
}

// NewBuilder returns an empty Builder, so that the type arguments are given
// once, at the start of a chain.
func NewBuilder[Req, Res any]() Builder[Req, Res] { return Builder[Req, Res]{} }

// Layer returns a Builder with l added inside the layers added so far: the
// layers added first see the request first.
func (b Builder[Req, Res]) Layer(l Layer[Req, Res]) Builder[Req, Res] {
	if isnil.Is(l) {
		panic("tower.Builder.Layer: nil Layer")
	}
	layers := make([]Layer[Req, Res], len(b.layers), len(b.layers)+1)
	copy(layers, b.layers)
	return Builder[Req, Res]{layers: append(layers, l)}
}

// Service returns inner wrapped in the builder's layers, the first added
// outermost. It panics if inner is nil (a nil interface, or a nil pointer
// in one), or if a layer returns a nil Service.
func (b Builder[Req, Res]) Service(inner Service[Req, Res]) Service[Req, Res] {
	if isnil.Is(inner) {
		panic("tower.Builder.Service: nil Service")
	}
	return stack[Req, Res](b.layers).Wrap(inner)
}

// Wrap is Service; it makes a Builder a [Layer], so a built stack can be
// used as one layer of a bigger one.
func (b Builder[Req, Res]) Wrap(inner Service[Req, Res]) Service[Req, Res] {
	return b.Service(inner)
}
