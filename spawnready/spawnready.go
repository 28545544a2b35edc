package spawnready

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/lifetime"
	"github.com/towergo/tower/internal/option"
)

// ErrClosed is returned by Ready once the SpawnReady is closed.
var ErrClosed = errors.New("spawnready: closed")

// SpawnReady is middleware that waits for the inner service's readiness on
// a goroutine of its own; see the package doc.
//
// Ready first asks the inner service whether it is ready now (see
// [tower.ReadyNow]). If not, Ready starts a drive: a goroutine that waits
// in the inner service's Ready for as long as it takes, while the caller
// waits under ctx. The drive hands the permit to one waiting caller or, if
// nobody is waiting, holds it for the next Ready, which takes it at once,
// even with a done ctx; then the drive ends. One drive runs at a time. The
// drive's context carries the values of the ctx of the caller that
// started it, but not its cancellation.
//
// A SpawnReady must be closed (see Close). It is safe for concurrent use.
// Its zero value is not usable; call [New].
type SpawnReady[Req, Res any] struct {
	c     *core[Req, Res]                     // shared with a drive; it must not point back here
	layer *lifetime.Set[SpawnReady[Req, Res]] // the Layer's, if a Layer made it
}

// core is the part of a SpawnReady that a drive uses.
type core[Req, Res any] struct {
	inner tower.Service[Req, Res]
	drive atomic.Pointer[drive[Req, Res]] // the drive running, if any
	mu    sync.Mutex                      // orders a drive's start and err's setting
	err   atomic.Pointer[error]           // set for good: the inner service failed or panicked, or ErrClosed

	log *slog.Logger // nil: no logging
}

// drive is one goroutine waiting for the inner service's readiness.
type drive[Req, Res any] struct {
	handoff chan tower.Permit[Req, Res] // unbuffered: the permit goes to one caller
	done    chan struct{}               // closed once the goroutine has exited
	cancel  context.CancelFunc
}

// New returns inner wrapped in a SpawnReady, with opts. It panics if inner
// is nil (a typed nil too) or an option is nil.
func New[Req, Res any](inner tower.Service[Req, Res], opts ...Option) *SpawnReady[Req, Res] {
	option.PanicIf(isnil.Is(inner), "spawnready.New: inner is nil")
	o := option.Apply[options]("spawnready.New", opts)
	c := &core[Req, Res]{inner: inner, log: o.logger}
	s := &SpawnReady[Req, Res]{c: c}
	lifetime.OnUnreachable(s, "a spawnready.SpawnReady", (*core[Req, Res]).collected, c)
	return s
}

// Ready returns the inner service's permit (see the type's doc), or
// ctx.Err() if ctx ends first; the drive goes on.
func (s *SpawnReady[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	p, err := s.c.ready(ctx)
	// A caller waiting for a drive keeps the SpawnReady reachable: its
	// cleanup would stop the drive.
	runtime.KeepAlive(s)
	return p, err
}

// Close stops the drive, if one runs, waits for its goroutine to exit, and
// releases the permit it held. From then on Ready fails with ErrClosed,
// unless the inner service failed first. Permits already handed out are
// not affected. Close is idempotent and always returns nil.
func (s *SpawnReady[Req, Res]) Close() error {
	s.Shutdown(context.Background())
	return nil
}

// Shutdown does what Close does, but returns ctx.Err() if ctx ends before
// the drive has exited, for an inner service whose Ready ignores its ctx.
// That drive goes on until the inner service's Ready returns, and releases
// the permit it gets; a later Close or Shutdown waits for it again.
// Shutdown is idempotent.
func (s *SpawnReady[Req, Res]) Shutdown(ctx context.Context) error {
	d, _ := s.c.stop(ErrClosed)
	if err := s.c.wait(ctx, d); err != nil {
		return err
	}
	if s.layer != nil {
		s.layer.Remove(s) // nothing left for the Layer to close
	}
	return nil
}

// ready waits for a drive's permit, starting a drive if none runs.
func (c *core[Req, Res]) ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	for {
		d := c.drive.Load()
		if d == nil {
			// Ready now, or a drive may have just served another caller.
			if p, ok, err := c.readyNow(); ok || err != nil {
				return p, err
			}
			if d = c.start(ctx); d == nil {
				continue // stopped meanwhile
			}
		}
		// A permit the drive holds goes even to a done ctx.
		select {
		case p := <-d.handoff:
			return p, nil
		default:
		}
		select {
		case p := <-d.handoff:
			return p, nil
		case <-d.done:
			// The drive served another caller, failed, or was stopped.
		case <-ctx.Done():
			// The inner service may be ready now while a drive still runs:
			// it served another caller, or missed capacity freed.
			if p, ok, err := c.readyNow(); ok || err != nil {
				return p, err
			}
			return tower.Permit[Req, Res]{}, ctx.Err()
		}
	}
}
