package spawnready

import (
	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/lifetime"
)

// A Layer wraps each service in a SpawnReady of its own, and closes all of
// them on Close. A stack built from layers hides its SpawnReadys; the Layer
// is the handle that stops their drives.
//
// A Layer is safe for concurrent use. The zero Layer is ready to use. Req
// and Res are the request and response types.
type Layer[Req, Res any] struct {
	made lifetime.Set[SpawnReady[Req, Res]] // to close on Close, unless collected first
}

// NewLayer returns a Layer of SpawnReadys.
func NewLayer[Req, Res any]() *Layer[Req, Res] { return &Layer[Req, Res]{} }

// Wrap returns inner wrapped in a new SpawnReady. It panics if inner is
// nil.
func (l *Layer[Req, Res]) Wrap(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
	s := New(inner)
	l.made.Add(s)
	return s
}

// Close closes every SpawnReady the layer made, waiting for their drives
// to exit. It always returns nil.
func (l *Layer[Req, Res]) Close() error {
	for _, v := range l.made.Take() {
		v.Close()
	}
	return nil
}

var _ tower.Layer[int, int] = (*Layer[int, int])(nil)
