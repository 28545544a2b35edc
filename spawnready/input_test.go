package spawnready_test

import (
	"testing"

	"github.com/towergo/tower/spawnready"
	"github.com/towergo/tower/towertest"
)

// New and Layer.Wrap refuse a nil inner service, and a typed nil one,
// which would fail at the first request.
func TestNewNilInner(t *testing.T) {
	var typedNil *towertest.Mock[string, string]
	tests := []struct {
		name string
		f    func()
	}{
		{"New", func() { spawnready.New[string, string](nil) }},
		{"NewTypedNil", func() { spawnready.New[string, string](typedNil) }},
		{"LayerWrap", func() { spawnready.NewLayer[string, string]().Wrap(nil) }},
		{"LayerWrapTypedNil", func() { spawnready.NewLayer[string, string]().Wrap(typedNil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, "spawnready.New: inner is nil", tt.f) })
	}
}
