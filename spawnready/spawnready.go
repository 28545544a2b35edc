package spawnready

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/towergo/tower"
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
// A SpawnReady must be closed, or be unreachable, for a drive to stop
// before the inner service is ready; a drive that holds a permit waits for
// a caller or for Close. Close stops the drive and releases its permit.
// Inside a testing/synctest bubble the garbage collector stops no drive
// (its cleanups run outside the bubble, where they could not): close every
// SpawnReady a test makes, or the Layer that made it, and synctest reports
// a drive left running when the test ends.
//
// A SpawnReady is safe for concurrent use. Its zero value is not usable;
// call [New]. Req and Res are the request and response types.
type SpawnReady[Req, Res any] struct {
	c *core[Req, Res] // what a drive shares; it must not point back here
}

// core is the part of a SpawnReady that a drive uses.
type core[Req, Res any] struct {
	inner   tower.Service[Req, Res]
	drive   atomic.Pointer[drive[Req, Res]] // the drive running, if any
	stopped atomic.Bool                     // err is set

	mu  sync.Mutex
	err error // set for good: the inner service failed, or ErrClosed
}

// drive is one goroutine waiting for the inner service's readiness.
type drive[Req, Res any] struct {
	handoff chan tower.Permit[Req, Res] // unbuffered: the permit goes to one caller
	done    chan struct{}               // closed once the goroutine has exited
	cancel  context.CancelFunc
}

// New returns inner wrapped in a SpawnReady. It starts no goroutine until
// the inner service is found not ready. It panics if inner is nil.
func New[Req, Res any](inner tower.Service[Req, Res]) *SpawnReady[Req, Res] {
	if inner == nil {
		panic("spawnready.New: inner is nil")
	}
	c := &core[Req, Res]{inner: inner}
	s := &SpawnReady[Req, Res]{c: c}
	lifetime.OnUnreachable(s, (*core[Req, Res]).collected, c)
	return s
}

// Ready returns the inner service's permit: at once if the inner service
// is ready now or a drive holds a permit, and otherwise when a drive gets
// one. If ctx ends first, it returns ctx.Err(), and the drive goes on. It
// returns the inner service's error once that has failed, and ErrClosed
// after Close.
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
func (s *SpawnReady[Req, Res]) Close() error {
	s.c.stop(ErrClosed, true)
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

// readyNow asks the inner service whether it is ready now, unless the
// SpawnReady has stopped. An error from the inner service fails the
// SpawnReady for good; the error recorded is returned.
func (c *core[Req, Res]) readyNow() (tower.Permit[Req, Res], bool, error) {
	if c.stopped.Load() {
		return tower.Permit[Req, Res]{}, false, c.failure()
	}
	p, ok, err := tower.ReadyNow(c.inner)
	if err != nil {
		err = c.fail(err)
	}
	return p, ok, err
}

// start starts a drive, unless one runs, which it returns, or the
// SpawnReady has stopped, when it returns nil.
func (c *core[Req, Res]) start(ctx context.Context) *drive[Req, Res] {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil
	}
	if d := c.drive.Load(); d != nil {
		return d
	}
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	d := &drive[Req, Res]{
		handoff: make(chan tower.Permit[Req, Res]),
		done:    make(chan struct{}),
		cancel:  cancel,
	}
	c.drive.Store(d)
	go c.run(dctx, d)
	return d
}

// run is a drive: it waits for the inner service and hands its permit to
// one caller, or releases it if the SpawnReady stops first.
func (c *core[Req, Res]) run(ctx context.Context, d *drive[Req, Res]) {
	defer close(d.done)
	defer d.cancel()
	// Cleared before done closes: a caller woken by done starts afresh.
	defer c.drive.CompareAndSwap(d, nil)
	p, err := c.inner.Ready(ctx)
	if err != nil {
		if ctx.Err() == nil {
			c.fail(err)
		}
		return
	}
	select {
	case d.handoff <- p:
	case <-ctx.Done():
		p.Release()
	}
}

// fail records the inner service's failure, stops a drive without waiting
// for it, and returns the error Ready must return: the first one recorded.
func (c *core[Req, Res]) fail(err error) error {
	c.stop(err, false)
	return c.failure()
}

// failure returns the error recorded by stop.
func (c *core[Req, Res]) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// stop records err, unless an error is recorded already, and cancels the
// drive, waiting for it to exit if wait is set. A cancelled drive releases
// the permit it holds.
func (c *core[Req, Res]) stop(err error, wait bool) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
		c.stopped.Store(true)
	}
	// No drive starts once err is set.
	d := c.drive.Load()
	c.mu.Unlock()
	if d != nil {
		d.cancel()
		if wait {
			<-d.done
		}
	}
}

// collected is the cleanup of a SpawnReady the garbage collector found
// unreachable: it stops the drive without waiting, as a cleanup must not
// block.
func (c *core[Req, Res]) collected() {
	c.stop(ErrClosed, false)
}
