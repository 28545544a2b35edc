package buffer

import (
	"sync"
	"weak"

	"github.com/towergo/tower"
)

// A Layer puts each service it wraps behind a Buffer of its own, and closes
// all of them on Close. A stack built from layers hides its Buffers; the
// Layer is the handle that stops their workers.
//
// A Layer is safe for concurrent use. Its zero value is not usable; call
// [NewLayer]. Req and Res are the request and response types.
type Layer[Req, Res any] struct {
	bound int

	mu      sync.Mutex
	buffers []weak.Pointer[Buffer[Req, Res]] // those a GC has not closed yet
}

// NewLayer returns a Layer of Buffers with bound slots each. It panics if
// bound is below 1 or above 1<<32-1.
func NewLayer[Req, Res any](bound int) *Layer[Req, Res] {
	validateBound(bound)
	return &Layer[Req, Res]{bound: bound}
}

// Wrap puts inner behind a new Buffer and starts its worker.
func (l *Layer[Req, Res]) Wrap(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
	b := New(inner, l.bound)
	l.mu.Lock()
	defer l.mu.Unlock()
	// Forget the Buffers the garbage collector has already closed.
	live := l.buffers[:0]
	for _, w := range l.buffers {
		if w.Value() != nil {
			live = append(live, w)
		}
	}
	l.buffers = append(live, weak.Make(b))
	return b
}

// Close closes every Buffer the layer made, waiting for their workers to
// exit. It always returns nil.
func (l *Layer[Req, Res]) Close() error {
	l.mu.Lock()
	buffers := l.buffers
	l.buffers = nil
	l.mu.Unlock()
	for _, w := range buffers {
		if b := w.Value(); b != nil {
			b.Close()
		}
	}
	return nil
}

var _ tower.Layer[int, int] = (*Layer[int, int])(nil)
