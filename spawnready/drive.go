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
// SpawnReady has stopped. An error, panic or runtime.Goexit fails the
// SpawnReady; a panic goes on up, and an error is returned as recorded.
func (c *core[Req, Res]) readyNow() (p tower.Permit[Req, Res], ok bool, err error) {
	if err := c.err.Load(); err != nil {
		return tower.Permit[Req, Res]{}, false, *err
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
		err = *c.err.Load()
	}
	return p, ok, err
}

// start starts a drive, unless one runs, which it returns, or the
// SpawnReady has stopped, when it returns nil.
func (c *core[Req, Res]) start(ctx context.Context) *drive[Req, Res] {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err.Load() != nil {
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

// run is a drive: it hands the inner service's permit to one caller, or
// releases it if the SpawnReady stops first. A panic or runtime.Goexit
// fails the SpawnReady, or goes to guard.Orphan once it has stopped.
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

// fail records err and stops a drive, without waiting; if err is the
// first failure, it logs it with write and reports true.
func (c *core[Req, Res]) fail(err error, write func(*slog.Logger, slog.Level, string, error, ...slog.Attr)) bool {
	_, first := c.stop(err)
	if first && c.log != nil {
		write(c.log, slog.LevelError, "spawnready: the inner service's Ready failed; every Ready fails from now on", err)
	}
	return first
}

// stop records err unless an error is, cancels the drive, and returns it
// (nil if none runs) and whether err was the first. A cancelled drive
// releases its permit once the inner service's Ready returns it.
func (c *core[Req, Res]) stop(err error) (d *drive[Req, Res], first bool) {
	c.mu.Lock()
	first = c.err.CompareAndSwap(nil, &err)
	// No drive starts once err is set.
	d = c.drive.Load()
	c.mu.Unlock()
	if d != nil {
		d.cancel()
	}
	return d, first
}

// wait waits for d, if any, to exit, or returns ctx.Err() if ctx ends
// first; a drive that has exited counts even then.
func (c *core[Req, Res]) wait(ctx context.Context, d *drive[Req, Res]) error {
	if d == nil {
		return nil
	}
	select {
	case <-d.done:
	case <-ctx.Done():
	}
	select {
	case <-d.done:
		return nil
	default:
		return ctx.Err()
	}
}

// collected is the cleanup of an unreachable SpawnReady: it stops it,
// unless closed or failed, and reports whether a drive ran.
func (c *core[Req, Res]) collected() bool {
	d, first := c.stop(ErrClosed)
	return first && d != nil
}
