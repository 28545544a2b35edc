package adaptive_test

import (
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/towertest"
)

func TestConformance(t *testing.T) {
	for _, tt := range []struct {
		name string
		alg  func() adaptive.Algorithm
		opts []adaptive.Option
	}{
		{"Gradient2Limit1", adaptive.Gradient2(), []adaptive.Option{adaptive.WithBounds(1, 1)}},
		{"VegasLimit1", adaptive.Vegas(), []adaptive.Option{adaptive.WithBounds(1, 1)}},
		{"AIMDLimit1", adaptive.AIMD(), []adaptive.Option{adaptive.WithBounds(1, 1)}},
		{"Gradient2Defaults", adaptive.Gradient2(), nil},
		{"AIMDMaxWaiting", adaptive.AIMD(), []adaptive.Option{adaptive.WithBounds(1, 1), adaptive.WithMaxWaiting(8)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{
				NewLayer: func() tower.Layer[string, string] { return adaptive.NewLayer[string, string](tt.alg, tt.opts...) },
				Request:  "hello", Response: "world",
			}.Run(t)
		})
	}
}
