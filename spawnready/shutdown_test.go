package spawnready_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/spawnready"
	"github.com/towergo/tower/towertest"
)

// stubborn is a mock whose Ready, once it may wait, ignores its ctx for a
// second and then takes the mock's permit.
type stubborn struct {
	*towertest.Mock[string, string]
}

func (s stubborn) Ready(ctx context.Context) (permit, error) {
	if ctx.Err() != nil {
		return permit{}, ctx.Err()
	}
	time.Sleep(time.Second)
	return s.Mock.Ready(context.WithoutCancel(ctx))
}

// closer is what Shutdown is tested on: a SpawnReady, or a Layer.
type closer interface {
	Close() error
	Shutdown(context.Context) error
}

// Shutdown bounds the wait for a drive whose inner service ignores its
// ctx: it returns ctx's error when ctx ends, at 10ms. The drive goes on,
// and releases the permit it gets at 1s; Close waits for it until then.
// No goroutine is left (synctest checks it). The same for a Layer, over
// the SpawnReadys it made.
func TestShutdownBoundsTheWait(t *testing.T) {
	tests := []struct {
		name string
		make func(inners []stubborn) closer
	}{
		{"SpawnReady", func(inners []stubborn) closer {
			s := spawnready.New[string, string](inners[0])
			tower.ReadyNow(s)
			return s
		}},
		{"Layer", func(inners []stubborn) closer {
			l := spawnready.NewLayer[string, string]()
			for _, inner := range inners {
				tower.ReadyNow(l.Wrap(inner))
			}
			return l
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var (
					inners []stubborn
					hs     []*handle
				)
				for range 2 {
					mock, h := towertest.NewMock[string, string]()
					inners, hs = append(inners, stubborn{mock}), append(hs, h)
				}
				start := time.Now()
				c := tt.make(inners)
				synctest.Wait() // the drives wait
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
				defer cancel()
				if err := c.Shutdown(ctx); err != context.DeadlineExceeded || time.Since(start) != 10*time.Millisecond {
					t.Errorf("Shutdown: got %v at %v, want %v at 10ms", err, time.Since(start), context.DeadlineExceeded)
				}
				if err := c.Close(); err != nil || time.Since(start) != time.Second {
					t.Errorf("Close: got %v at %v, want nil at 1s", err, time.Since(start))
				}
				for i, h := range hs {
					h.ExpectOutstanding(t, 0)
					if n := h.Calls(); n != 0 {
						t.Errorf("inner service %d got %d calls, want 0", i, n)
					}
				}
				if err := c.Shutdown(ctx); err != nil {
					t.Errorf("Shutdown once everything has stopped: got %v, want nil, even with a done ctx", err)
				}
			})
		})
	}
}

// Shutdown of a SpawnReady whose drive exits when told to returns nil at
// once, and Ready fails with ErrClosed from then on.
func TestShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h := newSpawnReady(t)
		h.Allow(0)
		rd := towertest.GoReady(t.Context(), s)
		if err := s.Shutdown(t.Context()); err != nil {
			t.Errorf("Shutdown: got %v, want nil", err)
		}
		if _, err := rd.Wait(); err != spawnready.ErrClosed {
			t.Errorf("waiting caller: got %v, want %v", err, spawnready.ErrClosed)
		}
		if _, _, err := tower.ReadyNow(s); err != spawnready.ErrClosed {
			t.Errorf("ReadyNow after Shutdown: got %v, want %v", err, spawnready.ErrClosed)
		}
	})
}
