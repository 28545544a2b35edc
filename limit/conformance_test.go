package limit_test

import (
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towertest"
)

func TestConformance(t *testing.T) {
	for _, tt := range []struct {
		name  string
		layer func() tower.Layer[string, string]
	}{
		{"Concurrency1", func() tower.Layer[string, string] { return limit.NewConcurrencyLayer[string, string](1) }},
		{"ConcurrencyShared1", func() tower.Layer[string, string] {
			return limit.NewSharedConcurrencyLayer[string, string](limit.NewSemaphore(1))
		}},
		{"Rate1Per100ms", func() tower.Layer[string, string] { return limit.NewRateLayer[string, string](1, 100*time.Millisecond) }},
		{"Rate3PerSecond", func() tower.Layer[string, string] { return limit.NewRateLayer[string, string](3, time.Second) }},
		{"RateNeverReached", func() tower.Layer[string, string] { return limit.NewRateLayer[string, string](1<<30, time.Second) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{NewLayer: tt.layer, Request: "hello", Response: "world"}.Run(t)
		})
	}
}
