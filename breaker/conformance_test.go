package breaker_test

import (
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/breaker"
	"github.com/towergo/tower/towertest"
)

// The breaker keeps the readiness contract, with the default options and
// with a failure ratio, while closed.
func TestConformance(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []breaker.Option
	}{
		{"Default", nil},
		{"Ratio", []breaker.Option{breaker.WithFailureRatio(0.5, 10, breaker.LastDuration(10e9))}},
		{"ConsecutiveOne", []breaker.Option{breaker.WithConsecutiveFailures(1)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{
				NewLayer: func() tower.Layer[string, string] {
					return breaker.NewLayer[string, string](breaker.AnyError, tt.opts...)
				},
				Request:  "hello",
				Response: "world",
			}.Run(t)
		})
	}
}
