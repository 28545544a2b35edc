package buffer

import (
	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/lifetime"
)

// A Layer puts each service it wraps behind a Buffer of its own, and closes
// all of them on Close. A stack built from layers hides its Buffers; the
// Layer is the handle that stops their workers.
//
// A Layer is safe for concurrent use. Its zero value is not usable; call
// [NewLayer]. Req and Res are the request and response types.
type Layer[Req, Res any] struct {
	bound int
	opts  []Option

	made lifetime.Set[Buffer[Req, Res]] // to close on Close, unless collected first
}

// NewLayer returns a Layer of Buffers with bound slots each, and opts. It
// panics if bound is below 1 or above 1<<32-1, or if an option is nil.
func NewLayer[Req, Res any](bound int, opts ...Option) *Layer[Req, Res] {
	validateBound(bound)
	newOptions("buffer.NewLayer", opts)
	return &Layer[Req, Res]{bound: bound, opts: append([]Option(nil), opts...)}
}

// Wrap puts inner behind a new Buffer and starts its worker.
func (l *Layer[Req, Res]) Wrap(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
	b := New(inner, l.bound, l.opts...)
	l.made.Add(b)
	return b
}

// Close closes every Buffer the layer made, waiting for their workers to
// exit. It always returns nil.
func (l *Layer[Req, Res]) Close() error {
	for _, v := range l.made.Take() {
		v.Close()
	}
	return nil
}

var _ tower.Layer[int, int] = (*Layer[int, int])(nil)
