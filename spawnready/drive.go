package spawnready

import (
	"context"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/internal/logs"
)

// Where the user code that panicked ran, for the PanicError's Where.
const (
	readyOnCaller  = "the inner service's Ready, on the goroutine of a SpawnReady's caller"
	readyOnDrive   = "the inner service's Ready, on a SpawnReady's drive"
	releaseOnDrive = "the release of the inner service's permit, on a SpawnReady's drive"
)

// readyNow asks the inner service whether it is ready now, unless the
// SpawnReady has stopped. An error fails the SpawnReady for good, and the
// error recorded is returned. It runs on the caller's goroutine: a panic
// in the inner service's Ready fails the SpawnReady and goes on up to the
// caller, as nothing is held for it.
func (c *core[Req, Res]) readyNow() (p tower.Permit[Req, Res], ok bool, err error) {
	if c.stopped.Load() {
		return tower.Permit[Req, Res]{}, false, c.failure()
	}
	returned := false
	defer func() {
		if !returned {
			c.panicked(recover())
		}
	}()
	p, ok, err = tower.ReadyNow(c.inner)
	returned = true
	if err != nil {
		err = c.fail(err)
	}
	return p, ok, err
}

// panicked fails the SpawnReady with v, the panic of the inner service's
// Ready on a caller's goroutine, and raises v again, to that caller. v is
// nil for runtime.Goexit, which goes on by itself.
func (c *core[Req, Res]) panicked(v any) {
	c.fail(guard.Recovered(readyOnCaller, v))
	if v != nil {
		panic(v)
	}
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
// one caller, or releases it if the SpawnReady stops first. A panic or
// runtime.Goexit in Ready fails the SpawnReady with a PanicError, which
// the waiting callers get once done closes; if the SpawnReady had already
// stopped, nobody will hear of it and it goes to guard.Orphan, as does a
// panic in the release of a permit, which happens only then.
func (c *core[Req, Res]) run(ctx context.Context, d *drive[Req, Res]) {
	where, returned := readyOnDrive, false
	defer func() {
		if !returned {
			if perr := guard.Recovered(where, recover()); !c.failOnDrive(perr) {
				guard.Orphan(perr)
			}
		}
		// Cleared before done closes: a caller woken by done starts
		// afresh, and finds the failure recorded above.
		c.drive.CompareAndSwap(d, nil)
		d.cancel()
		close(d.done)
	}()
	p, err := c.inner.Ready(ctx)
	if err != nil {
		returned = true
		if ctx.Err() == nil {
			c.failOnDrive(err)
		}
		return
	}
	select {
	case d.handoff <- p:
	case <-ctx.Done():
		where = releaseOnDrive
		p.Release()
	}
	returned = true
}

// fail records the inner service's failure, stops a drive without waiting
// for it, and returns the first error recorded, which Ready must return.
// It runs on a caller's goroutine and logs err if it is the first: a panic
// in the logger goes on up to the caller, with the SpawnReady stopped.
func (c *core[Req, Res]) fail(err error) error {
	if _, first := c.halt(err); first {
		c.logFailed(err, logs.Failure)
	}
	return c.failure()
}

// failOnDrive is fail on a drive, where a panic in the logger is
// recovered: it reports whether err is the failure recorded, which the
// callers will hear of.
func (c *core[Req, Res]) failOnDrive(err error) bool {
	_, first := c.halt(err)
	if first {
		c.logFailed(err, logs.SafeFailure)
	}
	return first
}

// failure returns the error recorded by stop.
func (c *core[Req, Res]) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// stop records err, unless an error is recorded already, cancels the
// drive, and returns it, or nil if none runs. A cancelled drive releases
// the permit it holds, once the inner service's Ready has returned it.
func (c *core[Req, Res]) stop(err error) *drive[Req, Res] {
	d, _ := c.halt(err)
	return d
}

// halt is stop, and reports whether err is the error recorded: whether
// it was the first.
func (c *core[Req, Res]) halt(err error) (d *drive[Req, Res], first bool) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
		c.stopped.Store(true)
		first = true
	}
	// No drive starts once err is set.
	d = c.drive.Load()
	c.mu.Unlock()
	if d != nil {
		d.cancel()
	}
	return d, first
}

// wait waits for d, if not nil, to exit, and returns nil; or returns
// ctx.Err() if ctx ends first. A drive that has exited counts even if ctx
// has ended.
func (c *core[Req, Res]) wait(ctx context.Context, d *drive[Req, Res]) error {
	if d == nil {
		return nil
	}
	select {
	case <-d.done:
		return nil
	default:
	}
	select {
	case <-d.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// collected is the cleanup of an unreachable SpawnReady: it stops the
// drive, if one runs, without waiting (a cleanup must not block), and
// reports whether it did. A SpawnReady that was closed, or failed, is not
// touched.
func (c *core[Req, Res]) collected() bool {
	if c.stopped.Load() {
		return false
	}
	return c.stop(ErrClosed) != nil
}
