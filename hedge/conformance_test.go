package hedge_test

import (
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/towertest"
)

func TestConformance(t *testing.T) {
	for _, tt := range []struct {
		name  string
		layer func() tower.Layer[string, string]
	}{
		// Too few latencies recorded: nothing is hedged.
		{"Learning", func() tower.Layer[string, string] {
			return hedge.NewLayer[string, string](hedge.Idempotent[string]{}, 10, 0.9, time.Minute)
		}},
		// A hedge armed for 10ms with every call: the suite's calls are
		// answered before it is sent.
		{"Armed", func() tower.Layer[string, string] { return armed() }},
		{"ArmedNoBudget", func() tower.Layer[string, string] { return armed(hedge.WithBudget(nil)) }},
		// Nothing is cloned, though the delay would be 0.
		{"NeverCloned", func() tower.Layer[string, string] {
			return hedge.NewLayer[string, string](neverClone{}, 0, 0.5, time.Minute)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{NewLayer: tt.layer, Request: "hello", Response: "world"}.Run(t)
		})
	}
}

// neverClone hedges nothing.
type neverClone struct{ hedge.Idempotent[string] }

func (neverClone) Clone(string) (string, bool) { return "", false }

// armed is a layer of Hedges with opts, each armed for 10ms from the start.
func armed(opts ...hedge.Option) tower.Layer[string, string] {
	return tower.LayerFunc[string, string](func(inner tower.Service[string, string]) tower.Service[string, string] {
		return hedge.MockLatencies(hedge.New(inner, hedge.Idempotent[string]{}, 1, 0.9, time.Minute, opts...), 10)
	})
}
