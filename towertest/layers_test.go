package towertest_test

import (
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/spawnready"
	"github.com/towergo/tower/towertest"
)

// The suite passes the library's own layers, which keep the contract in
// the ways the mock alone does not: a buffer grants a permit at once and
// waits for the inner service in Call, and turns the inner service's panics
// into PanicErrors, since they happen on its worker; a load shedder answers
// at once when the inner service is not ready; a spawnready waits for the
// inner service on a goroutine of its own. Each must pass every test.
func TestLayerSuiteOnLibraryLayers(t *testing.T) {
	for _, tt := range []struct {
		name  string
		layer func() tower.Layer[string, string]
	}{
		{"Buffer", func() tower.Layer[string, string] { return buffer.NewLayer[string, string](1) }},
		{"LoadShed", func() tower.Layer[string, string] { return loadshed.NewLayer[string, string]() }},
		{"SpawnReady", func() tower.Layer[string, string] { return spawnready.NewLayer[string, string]() }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{NewLayer: tt.layer, Request: "hello", Response: "world"}.Run(t)
		})
	}
}
