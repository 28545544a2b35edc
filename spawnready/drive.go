package spawnready

import (
	"context"
	"log/slog"

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
// error recorded is returned. A panic or runtime.Goexit in the inner
// service's Ready fails the SpawnReady and goes on up to the caller.
func (c *core[Req, Res]) readyNow() (p tower.Permit[Req, Res], ok bool, err error) {
	if c.stopped.Load() {
		return tower.Permit[Req, Res]{}, false, c.failure()
	}
	returned := false
	defer func() {
		if !returned {
			v := recover() // nil for runtime.Goexit, which goes on by itself
			c.fail(guard.Recovered(readyOnCaller, v), logs.Failure)
			if v != nil {
				panic(v)
			}
		}
	}()
	p, ok, err = tower.ReadyNow(c.inner)
	returned = true
	if err != nil {
		c.fail(err, logs.Failure)
		err = c.failure()
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
// one caller, or releases it if the SpawnReady stops first. A panic or
// runtime.Goexit in Ready fails the SpawnReady; if it had already stopped,
// nobody will hear of it and it goes to guard.Orphan, as does a panic in
// the release of a permit.
func (c *core[Req, Res]) run(ctx context.Context, d *drive[Req, Res]) {
	where, returned := readyOnDrive, false
	defer func() {
		if !returned {
			if perr := guard.Recovered(where, recover()); !c.fail(perr, logs.SafeFailure) {
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
			c.fail(err, logs.SafeFailure)
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

// fail records err, the inner service's failure, and stops a drive
// without waiting for it. If err is the first failure, it logs it with
// write (logs.Failure on a caller's goroutine, logs.SafeFailure on a
// drive, which recovers a panic in the logger), and reports true.
func (c *core[Req, Res]) fail(err error, write func(*slog.Logger, slog.Level, string, error, ...slog.Attr)) bool {
	_, first := c.stop(err)
	if first && c.log != nil {
		write(c.log, slog.LevelError, "spawnready: the inner service's Ready failed; every Ready fails from now on", err)
	}
	return first
}

// failure returns the error recorded.
func (c *core[Req, Res]) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// stop records err, unless an error is recorded already, cancels the
// drive, and returns it, or nil if none runs, and whether err was the
// first. A cancelled drive releases the permit it holds, once the inner
// service's Ready has returned it.
func (c *core[Req, Res]) stop(err error) (d *drive[Req, Res], first bool) {
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
// drive, if one runs, without waiting, and reports whether it did. A
// SpawnReady that was closed, or failed, is not touched.
func (c *core[Req, Res]) collected() bool {
	if c.stopped.Load() {
		return false
	}
	d, _ := c.stop(ErrClosed)
	return d != nil
}
