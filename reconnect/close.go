package reconnect

import (
	"context"

	"github.com/towergo/tower"
)

// serviceReady asks the service of cn for a permit, on the caller's
// goroutine. A panic in its Ready, or runtime.Goexit, is that service
// failing its readiness: it is replaced, and the panic goes on up.
func (c *core[Target, Req, Res]) serviceReady(ctx context.Context, cn *conn[Req, Res]) (p tower.Permit[Req, Res], err error) {
	returned := false
	defer func() {
		if !returned {
			c.replace(ctx, cn)
		}
	}()
	p, err = cn.svc.Ready(ctx)
	returned = true
	return p, err
}

// replace drops cn, whose Ready panicked, unless it was dropped already,
// starts a connect for the next caller, and closes cn (which may panic).
func (c *core[Target, Req, Res]) replace(ctx context.Context, cn *conn[Req, Res]) {
	if !c.conn.CompareAndSwap(cn, nil) {
		return
	}
	c.mu.Lock()
	if c.err == nil && c.attempt == nil && c.pending == nil && c.conn.Load() == nil {
		c.start(ctx)
	}
	c.mu.Unlock()
	closeService(cn.svc)
}

// drop forgets cn, which failed its readiness check with err, closes it,
// and logs it; it does nothing if cn was already dropped.
func (c *core[Target, Req, Res]) drop(cn *conn[Req, Res], err error) {
	if c.conn.CompareAndSwap(cn, nil) {
		c.logDropped(err, closeService(cn.svc))
	}
}

// shutdown closes the Reconnect, waits for the connect in progress as long
// as ctx lasts, then closes the current service (none while one runs).
func (c *core[Target, Req, Res]) shutdown(ctx context.Context) error {
	if a, _ := c.stop(); a != nil {
		if err := waitDone(ctx, a.done); err != nil {
			return err
		}
	}
	if cn := c.conn.Swap(nil); cn != nil {
		return closeService(cn.svc)
	}
	return nil
}

// stop sets ErrClosed unless err is set, reporting whether it did, and
// cancels the connect in progress, which it returns. No connect starts
// once err is set; one that finishes now closes its service.
func (c *core[Target, Req, Res]) stop() (a *attempt[Req, Res], first bool) {
	c.mu.Lock()
	if first = c.err == nil; first {
		c.err = ErrClosed
	}
	a = c.attempt
	c.mu.Unlock()
	if a != nil {
		a.cancel()
	}
	return a, first
}

// waitDone waits for done to close and returns nil, or returns ctx.Err() if
// ctx ends first. done closed counts even if ctx has ended.
func waitDone(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
	case <-ctx.Done():
	}
	select {
	case <-done:
		return nil
	default:
		return ctx.Err()
	}
}

// collected is the cleanup of an unreachable Reconnect: it stops it,
// unless closed or broken, and reports whether a connect was in progress.
// The current service stays open: permits handed out may be using it.
func (c *core[Target, Req, Res]) collected() bool {
	a, first := c.stop()
	return first && a != nil
}
