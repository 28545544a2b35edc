package reconnect

import (
	"context"

	"github.com/towergo/tower"
)

// serviceReady asks the service of cn for a permit, on the caller's
// goroutine. A panic in its Ready, or runtime.Goexit, is that service
// failing its readiness: it is replaced, and the panic goes on up to the
// caller.
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

// replace drops cn, whose Ready panicked, starts a connect for the next
// caller, and closes cn (which may panic too); it does nothing if cn was
// already dropped.
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

// shutdown closes the Reconnect, waits for the connect in progress, if
// any, as long as ctx lasts, and closes the current service. No service is
// current while a connect runs.
func (c *core[Target, Req, Res]) shutdown(ctx context.Context) error {
	c.mu.Lock()
	if c.err == nil {
		c.err = ErrClosed
	}
	a := c.attempt
	c.mu.Unlock()
	// No connect starts once err is set; one that finishes now closes its
	// service.
	if a != nil {
		a.cancel()
		if err := waitDone(ctx, a.done); err != nil {
			return err
		}
	}
	if cn := c.conn.Swap(nil); cn != nil {
		return closeService(cn.svc)
	}
	return nil
}

// waitDone waits for done to close and returns nil, or returns ctx.Err() if
// ctx ends first. done closed counts even if ctx has ended.
func waitDone(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
		return nil
	default:
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// collected is the cleanup of an unreachable Reconnect: it cancels a
// connect in progress without waiting, and reports whether there was one.
// It does not close the current service, which calls made with its
// permits may still be using.
func (c *core[Target, Req, Res]) collected() bool {
	c.mu.Lock()
	if c.err == ErrClosed {
		c.mu.Unlock()
		return false
	}
	if c.err == nil {
		c.err = ErrClosed
	}
	a := c.attempt
	c.mu.Unlock()
	if a != nil {
		a.cancel()
	}
	return a != nil
}
