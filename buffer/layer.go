package buffer

import (
	"context"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/lifetime"
)

// A Layer puts each service it wraps behind a Buffer of its own: the
// handle that closes the Buffers a stack hides. It holds each Buffer it
// made until that is closed, by its own Close or the Layer's.
//
// A Layer is safe for concurrent use. Its zero value is not usable; call
// [NewLayer]. Req and Res are the request and response types.
type Layer[Req, Res any] struct {
	bound int
	opts  []Option

	made lifetime.Set[Buffer[Req, Res]] // to close on Close, unless closed before
}

// NewLayer returns a Layer of Buffers with bound slots each, and opts. It
// panics if bound is below 1 or above 1<<32-1, or if an option is nil; Wrap
// panics, as [New] does, if its service is nil or a typed nil.
func NewLayer[Req, Res any](bound int, opts ...Option) *Layer[Req, Res] {
	validateBound("buffer.NewLayer", bound)
	newOptions("buffer.NewLayer", opts)
	return &Layer[Req, Res]{bound: bound, opts: append([]Option(nil), opts...)}
}

// Wrap puts inner behind a new Buffer.
func (l *Layer[Req, Res]) Wrap(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
	b := New(inner, l.bound, l.opts...)
	b.layer = &l.made
	l.made.Add(b)
	return b
}

// Close closes every Buffer the layer made that is still in use, waiting
// for each as [Buffer.Close] does. It always returns nil.
func (l *Layer[Req, Res]) Close() error {
	l.Shutdown(context.Background())
	return nil
}

// Shutdown stops every Buffer the layer made, all before it waits for any,
// and waits for them as [Buffer.Shutdown] does: it returns nil, or
// ctx.Err() if ctx ends first. The Layer keeps those it did not finish
// waiting for, so that a later Close or Shutdown waits for them again.
func (l *Layer[Req, Res]) Shutdown(ctx context.Context) error {
	made := l.made.Take()
	for _, b := range made {
		b.shut(ErrClosed)
	}
	for i, b := range made {
		if err := b.Shutdown(ctx); err != nil {
			for _, b := range made[i:] {
				l.made.Add(b)
			}
			return err
		}
	}
	return nil
}

var _ tower.Layer[int, int] = (*Layer[int, int])(nil)
