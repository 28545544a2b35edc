package spawnready

import (
	"context"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/lifetime"
	"github.com/towergo/tower/internal/option"
)

// A Layer wraps each service in a SpawnReady of its own. A stack hides its
// SpawnReadys, so the Layer is the handle that stops their drives: it
// holds each SpawnReady it made until that is closed, by its own Close or
// the Layer's.
//
// A Layer is safe for concurrent use. The zero Layer is ready to use.
type Layer[Req, Res any] struct {
	opts []Option
	made lifetime.Set[SpawnReady[Req, Res]] // to close on Close, unless closed before
}

// NewLayer returns a Layer of SpawnReadys, each with opts. It panics if an
// option is nil.
func NewLayer[Req, Res any](opts ...Option) *Layer[Req, Res] {
	option.Apply[options]("spawnready.NewLayer", opts) // now, not when the layer is used
	return &Layer[Req, Res]{opts: append([]Option(nil), opts...)}
}

// Wrap returns inner wrapped in a new SpawnReady. It panics if inner is
// nil, as [New] does.
func (l *Layer[Req, Res]) Wrap(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
	s := New(inner, l.opts...)
	s.layer = &l.made
	l.made.Add(s)
	return s
}

// Close closes every SpawnReady the layer made, waiting for their drives
// to exit. It always returns nil.
func (l *Layer[Req, Res]) Close() error {
	l.Shutdown(context.Background())
	return nil
}

// Shutdown does what Close does, but returns ctx.Err() if ctx ends before
// every drive has exited. It stops every drive first, then waits. The
// SpawnReadys whose drives may still run stay with the layer, so that a
// later Close or Shutdown waits for them again.
func (l *Layer[Req, Res]) Shutdown(ctx context.Context) error {
	made := l.made.Take()
	for _, s := range made {
		s.c.stop(ErrClosed)
	}
	for i, s := range made {
		if err := s.Shutdown(ctx); err != nil {
			for _, s := range made[i:] {
				l.made.Add(s)
			}
			return err
		}
	}
	return nil
}

var _ tower.Layer[int, int] = (*Layer[int, int])(nil)
