package tower

import "github.com/towergo/tower/internal/isnil"

// OptionalLayer returns l, or, if l is nil (a nil interface, or one that
// holds a nil pointer or a nil [LayerFunc]), a layer that returns each
// service unchanged and costs nothing per request: tower's option_layer,
// for a layer that depends on configuration.
func OptionalLayer[Req, Res any](l Layer[Req, Res]) Layer[Req, Res] {
	if isnil.Is(l) {
		return LayerFunc[Req, Res](func(inner Service[Req, Res]) Service[Req, Res] { return inner })
	}
	return l
}
