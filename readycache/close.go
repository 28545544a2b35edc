package readycache

import (
	"context"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
)

// Close empties the cache: it releases the ready endpoints' reservations,
// stops the drivers and waits for them, however long an endpoint's Ready
// takes to return, and wakes every Take with ErrClosed. Permits already
// taken stay their callers'. Close is idempotent and returns nil.
func (c *Cache[K, Req, Res, S]) Close() error { return c.Shutdown(context.Background()) }

// Shutdown does what Close does, but waits for the drivers only as long as
// ctx lasts: it returns nil once they have all exited, or ctx.Err() if ctx
// ends first. A driver left exits when the Ready it is in returns,
// releasing the permit it got and telling the removal handler; call
// Shutdown or Close again to wait for it. Whatever ctx says, the first
// call closes the cache and calls the removal handler for every endpoint
// no driver is in before it waits; if one of those calls panics, the
// others are made all the same, then the panic goes on up.
func (c *Cache[K, Req, Res, S]) Shutdown(ctx context.Context) error {
	removed := c.closeAll()
	c.stop()
	guard.Each(removed, c.finish) // every one, even if a handler panics
	select {
	case <-c.stopped:
	case <-ctx.Done():
		select {
		case <-c.stopped: // closed counts even if ctx is done
		default:
			return ctx.Err()
		}
	}
	return nil
}

// closeAll returns the removals of every endpoint, none if the cache was
// closed already.
func (c *Cache[K, Req, Res, S]) closeAll() []*removal[K, Req, Res, S] {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	removed := make([]*removal[K, Req, Res, S], 0, len(c.entries))
	for _, e := range c.entries {
		removed = append(removed, c.removeLocked(e, nil))
	}
	close(c.changed) // whether watched or not: Changed returns it from now on
	if c.drivers == 0 {
		close(c.stopped)
	}
	return removed
}

// A removal is an endpoint that has left the cache, with what its remover
// must do once it has let go of the lock.
type removal[K comparable, Req, Res any, S tower.Service[Req, Res]] struct {
	e      *entry[K, Req, Res, S]
	held   tower.Permit[Req, Res]
	failed *Failed[K]
	tell   bool // no driver is in e's Ready: that one would tell the handler
}

// finish releases r's reservation, then calls the failure handler, then
// the removal handler, on a caller's goroutine. A panic in any of them goes
// on up once the others have run: an endpoint whose Release panics still
// reaches the removal handler, which may be all that closes it.
func (c *Cache[K, Req, Res, S]) finish(r *removal[K, Req, Res, S]) {
	if r == nil {
		return
	}
	if r.tell && c.onRemove != nil {
		defer c.onRemove(r.e.key, r.e.svc)
	}
	if r.failed != nil && c.onFailure != nil {
		defer c.onFailure(r.failed)
	}
	r.held.Release()
}

// finishTaken finishes r, the removal of the endpoint whose permit p the
// caller has just taken: if a handler panics, the caller never gets p.
func (c *Cache[K, Req, Res, S]) finishTaken(r *removal[K, Req, Res, S], p tower.Permit[Req, Res]) {
	guard.Undo(func() { c.finish(r) }, p.Release)
}

// Where a driver runs user code; a panic there is logged.
const (
	whereRelease   = "an endpoint's permit's Release, on a ready cache's driver"
	whereOnFailure = "the failure handler, on a ready cache's driver"
	whereOnRemove  = "the removal handler, on a ready cache's driver"
)

// finishOnDriver is finish on a driver, where each panic is logged.
func (c *Cache[K, Req, Res, S]) finishOnDriver(r *removal[K, Req, Res, S]) {
	guard.Orphan(guard.Call(whereRelease, r.held.Release))
	if r.failed != nil && c.onFailure != nil {
		guard.Orphan(guard.Call(whereOnFailure, func() { c.onFailure(r.failed) }))
	}
	if r.tell && c.onRemove != nil {
		guard.Orphan(guard.Call(whereOnRemove, func() { c.onRemove(r.e.key, r.e.svc) }))
	}
}
