package tower_test

import (
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/towertest"
)

// A nil layer is the identity: the service comes back as it is, with no
// wrapper, also inside a Builder.
func TestOptionalLayerNil(t *testing.T) {
	mock, _ := towertest.NewMock[string, string]()
	if got := tower.OptionalLayer[string, string](nil).Wrap(mock); got != tower.Service[string, string](mock) {
		t.Errorf("got %p, want the service itself, %p", got, mock)
	}
	svc := stack.New[string, string]().
		Layer(tower.OptionalLayer[string, string](nil)).
		Service(mock)
	if svc != tower.Service[string, string](mock) {
		t.Errorf("in a Builder: got %p, want the service itself, %p", svc, mock)
	}
}

// A layer that is there is applied.
func TestOptionalLayerPresent(t *testing.T) {
	bang := tower.MapResponseLayer[string](func(s string) string { return s + "!" })
	svc := stack.New[string, string]().
		Layer(tower.OptionalLayer(bang)).
		Service(tower.ServiceFunc[string, string](echo))
	if res, err := tower.Call(t.Context(), svc, "hi"); res != "hi!" || err != nil {
		t.Errorf("got %q, %v; want %q, nil", res, err, "hi!")
	}
}

func TestOptionalLayerConformance(t *testing.T) {
	layers := map[string]func() tower.Layer[string, string]{
		"nil": func() tower.Layer[string, string] { return tower.OptionalLayer[string, string](nil) },
		"MapErrLayer": func() tower.Layer[string, string] {
			return tower.OptionalLayer(tower.MapErrLayer[string, string](func(err error) error { return err }))
		},
	}
	for name, newLayer := range layers {
		t.Run(name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{NewLayer: newLayer, Request: "hello", Response: "world"}.Run(t)
		})
	}
}
