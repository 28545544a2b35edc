package tower

import "github.com/towergo/tower/internal/isnil"

// OptionalLayer returns l, or, if l is nil, a layer that returns each
// service unchanged and costs nothing per request: tower's option_layer,
// for a layer that depends on configuration. Only a nil interface value
// counts as absent: a Layer holding a nil pointer or a nil [LayerFunc] is
// returned as it is.
func OptionalLayer[Req, Res any](l Layer[Req, Res]) Layer[Req, Res] {
	if isnil.Is(l) {
		return identity[Req, Res]{}
	}
	return l
}

// identity is the layer that leaves a service as it is.
type identity[Req, Res any] struct{}

func (identity[Req, Res]) Wrap(inner Service[Req, Res]) Service[Req, Res] { return inner }
