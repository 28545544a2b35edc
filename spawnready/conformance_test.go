package spawnready_test

import (
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/spawnready"
	"github.com/towergo/tower/towertest"
)

func TestConformance(t *testing.T) {
	towertest.LayerSuite[string, string]{
		NewLayer: func() tower.Layer[string, string] { return spawnready.NewLayer[string, string]() },
		Request:  "hello",
		Response: "world",
	}.Run(t)
}
