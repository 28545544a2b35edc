package tower

import "github.com/towergo/tower/internal/isnil"

// OptionalLayer returns l, or, if l is nil, a layer that returns each
// service unchanged: tower's option_layer. It lets a stack be built in one
// expression when a layer depends on configuration:
//
//	var shed tower.Layer[Req, Res] // nil unless configured
//	if cfg.Shed {
//		shed = loadshed.NewLayer[Req, Res]()
//	}
//	svc := tower.NewBuilder[Req, Res]().
//		Layer(tower.OptionalLayer(shed)).
//		Layer(limit.NewConcurrencyLayer[Req, Res](10)).
//		Service(handler)
//
// The identity layer adds no wrapper: the service it wraps is returned
// as it is, so an absent layer costs nothing per request.
//
// Only a nil interface value counts as absent. A Layer interface that holds
// a nil pointer or a nil [LayerFunc] is not nil, and is returned as it is.
func OptionalLayer[Req, Res any](l Layer[Req, Res]) Layer[Req, Res] {
	if isnil.Is(l) {
		return identity[Req, Res]{}
	}
	return l
}

// identity is the layer that leaves a service as it is.
type identity[Req, Res any] struct{}

func (identity[Req, Res]) Wrap(inner Service[Req, Res]) Service[Req, Res] { return inner }
