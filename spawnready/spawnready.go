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
)

// ErrClosed is returned by Ready after [SpawnReady.Close], and by the Ready
// of callers that were waiting when it was called.
var ErrClosed = errors.New("spawnready: closed")

// SpawnReady is middleware that waits for the inner service's readiness on
// a goroutine of its own, so that the wait goes on when the caller gives
// up: tower's SpawnReady.
//
// Ready first asks the inner service whether it is ready now (see
// [tower.ReadyNow]); if it is, the permit is the inner service's own and no
// goroutine is involved. If it is not, Ready starts a drive: a goroutine
// that waits in the inner service's Ready for as long as it takes. The
// caller waits for the drive's permit under its ctx; if ctx ends first,
// Ready returns ctx.Err() and the drive goes on. When the inner service
// becomes ready, the drive hands its permit to the caller waiting longest,
// or, if nobody is waiting, holds it for the next Ready, which takes it at
// once, even with a done ctx. Then the drive ends. One drive runs at a
// time; callers that arrive while it runs wait for it, and those it could
// not serve ask the inner service again and start the next drive.
//
// So the inner service's readiness makes progress even while nobody waits
// for it: a handshake, a warm-up or a place in a queue is not lost when a
// caller's ctx ends, and a caller that only asks "ready now?" (a load
// shedder, a balancer probing endpoints) starts the wait with its first
// question and finds the service ready at a later one.
//
// The price is capacity: a permit the drive holds for the next caller is
// reserved in the inner service (a concurrency permit, a queue slot, a
// place in a rate window) and unavailable to anyone else, for as long as no
// Ready comes to take it. Close gives it back.
//
// If the inner service's Ready fails, SpawnReady fails for good: every
// Ready returns that error. The drive runs under a context that carries
// the values of the ctx of the caller that started it, but not its
// cancellation, which would end the drive with the caller's wait.
//
// A panic in the inner service's Ready is that service failing its
// readiness, wherever it happens. On a drive, it is recovered into a
// [*tower.PanicError], and the SpawnReady fails for good with it: the
// callers waiting, and every later Ready, get it as their error. On a
// caller's own goroutine (Ready asks the inner service directly first),
// the SpawnReady fails for good with the same PanicError, and then the
// panic goes on up to that caller. runtime.Goexit in the inner service's
// Ready does the same, with a PanicError that says so.
//
// A SpawnReady must be closed, by its Close or its Layer's, for a drive to
// stop before the inner service is ready; a drive that holds a permit
// waits for a caller or for Close. Close stops the drive and releases its
// permit; Shutdown does the same, but waits for the drive only as long as
// its ctx lasts. As a safety net, a SpawnReady that becomes unreachable
// with a drive running has the drive stopped by a runtime cleanup, which
// logs a warning. That cleanup runs outside every testing/synctest bubble,
// where stopping what the bubble made is fatal: a test must close what it
// makes.
//
// A SpawnReady is safe for concurrent use. Its zero value is not usable;
// call [New]. Req and Res are the request and response types.
type SpawnReady[Req, Res any] struct {
	c     *core[Req, Res]                     // what a drive shares; it must not point back here
	layer *lifetime.Set[SpawnReady[Req, Res]] // the Layer's, if a Layer made it
}

// core is the part of a SpawnReady that a drive uses.
type core[Req, Res any] struct {
	inner   tower.Service[Req, Res]
	drive   atomic.Pointer[drive[Req, Res]] // the drive running, if any
	stopped atomic.Bool                     // err is set

	mu  sync.Mutex
	err error // set for good: the inner service failed or panicked, or ErrClosed

	log *slog.Logger // nil: no logging
}

// drive is one goroutine waiting for the inner service's readiness.
type drive[Req, Res any] struct {
	handoff chan tower.Permit[Req, Res] // unbuffered: the permit goes to one caller
	done    chan struct{}               // closed once the goroutine has exited
	cancel  context.CancelFunc
}

// New returns inner wrapped in a SpawnReady, with opts. It starts no
// goroutine until the inner service is found not ready. It panics if inner
// is nil, or a nil pointer (or func, map, chan) in an interface, or if an
// option is nil.
func New[Req, Res any](inner tower.Service[Req, Res], opts ...Option) *SpawnReady[Req, Res] {
	const fn = "spawnready.New"
	if isnil.Is(inner) {
		panic(fn + ": inner is nil")
	}
	o := newOptions(fn, opts)
	c := &core[Req, Res]{inner: inner, log: o.logger}
	s := &SpawnReady[Req, Res]{c: c}
	lifetime.OnUnreachable(s, "a spawnready.SpawnReady", (*core[Req, Res]).collected, c)
	return s
}

// Ready returns the inner service's permit: at once if the inner service
// is ready now or a drive holds a permit, and otherwise when a drive gets
// one. If ctx ends first, it returns ctx.Err(), and the drive goes on. It
// returns the inner service's error once that has failed (a
// *tower.PanicError if its Ready panicked), and ErrClosed after Close.
func (s *SpawnReady[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	p, err := s.c.ready(ctx)
	// A caller waiting for a drive keeps the SpawnReady reachable: its
	// cleanup would stop the drive.
	runtime.KeepAlive(s)
	return p, err
}

// Close stops the drive, if one runs, waits for its goroutine to exit, and
// releases the permit it held. From then on Ready fails with ErrClosed, or
// with the inner service's error if that came first; so do the callers
// that were waiting. Permits already handed out are the inner service's
// own and are not affected. Close is idempotent and always returns nil.
//
// A drive waits in the inner service's Ready, under a ctx that Close
// cancels; an inner service that ignores its ctx holds Close up for as
// long as it does. [SpawnReady.Shutdown] bounds that wait.
func (s *SpawnReady[Req, Res]) Close() error {
	s.Shutdown(context.Background())
	return nil
}

// Shutdown does what Close does, and returns nil once the drive, if one
// ran, has exited, or ctx.Err() if ctx ends first, as net/http's
// Server.Shutdown does. A drive still running then goes on until the
// inner service's Ready returns, and releases the permit it gets; a
// later Close or Shutdown waits for it again. Shutdown is idempotent.
func (s *SpawnReady[Req, Res]) Shutdown(ctx context.Context) error {
	if err := s.c.wait(ctx, s.c.stop(ErrClosed)); err != nil {
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
		// A permit the drive holds is capacity free now: it goes even to a
		// done ctx.
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
			// The inner service may be ready now although a drive still
			// runs: one that has served another caller and not yet
			// exited, or one waiting for capacity that freed without
			// waking it. Capacity free now goes even to a done ctx.
			if p, ok, err := c.readyNow(); ok || err != nil {
				return p, err
			}
			return tower.Permit[Req, Res]{}, ctx.Err()
		}
	}
}
