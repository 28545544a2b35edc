package spawnready

import (
	"sync"
	"weak"

	"github.com/towergo/tower"
)

// A Layer wraps each service in a SpawnReady of its own, and closes all of
// them on Close. A stack built from layers hides its SpawnReadys; the Layer
// is the handle that stops their drives.
//
// A Layer is safe for concurrent use. The zero Layer is ready to use. Req
// and Res are the request and response types.
type Layer[Req, Res any] struct {
	mu   sync.Mutex
	made []weak.Pointer[SpawnReady[Req, Res]] // those still reachable when last looked at
}

// NewLayer returns a Layer of SpawnReadys.
func NewLayer[Req, Res any]() *Layer[Req, Res] { return &Layer[Req, Res]{} }

// Wrap returns inner wrapped in a new SpawnReady. It panics if inner is
// nil.
func (l *Layer[Req, Res]) Wrap(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
	s := New(inner)
	l.mu.Lock()
	defer l.mu.Unlock()
	// Forget those the garbage collector has already stopped.
	live := l.made[:0]
	for _, w := range l.made {
		if w.Value() != nil {
			live = append(live, w)
		}
	}
	l.made = append(live, weak.Make(s))
	return s
}

// Close closes every SpawnReady the layer made, waiting for their drives
// to exit. It always returns nil.
func (l *Layer[Req, Res]) Close() error {
	l.mu.Lock()
	made := l.made
	l.made = nil
	l.mu.Unlock()
	for _, w := range made {
		if s := w.Value(); s != nil {
			s.Close()
		}
	}
	return nil
}

var _ tower.Layer[int, int] = (*Layer[int, int])(nil)
