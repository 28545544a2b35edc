package readycache

import (
	"context"

	"github.com/towergo/tower"
)

// takeLocked moves e's permit out to the caller, and asks e for its next
// reservation at once. It returns e's removal if e turned out broken: e is
// gone then, and the permit taken is still the caller's (it was granted
// before e broke). c.mu must be held.
func (c *Cache[K, Req, Res, S]) takeLocked(e *entry[K, Req, Res, S]) (tower.Permit[Req, Res], *removal[K, Req, Res, S]) {
	p := e.permit
	e.permit = tower.Permit[Req, Res]{}
	return p, c.refillLocked(e)
}

// refillLocked asks e, which holds no permit, whether it is ready now. If it
// is, e is ready (in place, if it was already in the ready set); if it is
// not, e is pending and a driver waits for it; if it is broken, e is
// removed and its removal returned. c.mu must be held.
func (c *Cache[K, Req, Res, S]) refillLocked(e *entry[K, Req, Res, S]) (failed *removal[K, Req, Res, S]) {
	asked := false
	defer func() {
		if !asked {
			// Ready panicked: drop the endpoint before the panic goes on,
			// so that the cache stays consistent. It held no reservation,
			// and the panic is its report; the removal handler is not
			// told.
			c.removeLocked(e, nil)
		}
	}()
	p, ok, err := tower.ReadyNow[Req, Res](e.svc)
	asked = true
	switch {
	case ok:
		e.permit = p
		if e.index < 0 {
			c.readyLocked(e)
		}
		return nil
	case err != nil:
		return c.removeLocked(e, err)
	}
	if e.index >= 0 {
		c.unreadyLocked(e)
	}
	c.driveLocked(e)
	return nil
}

// driveLocked starts the goroutine that waits for e to be ready. c.mu must
// be held.
func (c *Cache[K, Req, Res, S]) driveLocked(e *entry[K, Req, Res, S]) {
	if e.ctx == nil {
		e.ctx, e.cancel = context.WithCancel(c.root)
	}
	c.drivers.Add(1)
	e.driving = true
	go c.drive(e)
}

// drive waits in e's Ready. The permit makes e ready, unless e has left the
// cache meanwhile; an error other than e's context ending removes e and is
// reported.
func (c *Cache[K, Req, Res, S]) drive(e *entry[K, Req, Res, S]) {
	defer c.drivers.Done()
	p, err := e.svc.Ready(e.ctx)
	c.mu.Lock()
	e.driving = false
	if e.gone {
		c.mu.Unlock()
		p.Release() // e left while its Ready returned: the reservation is nobody's
		if c.onRemove != nil {
			c.onRemove(e.key, e.svc) // its removal left that to this goroutine
		}
		return
	}
	if err != nil {
		r := c.removeLocked(e, err)
		c.mu.Unlock()
		c.finish(r)
		return
	}
	e.permit = p
	c.readyLocked(e)
	c.mu.Unlock()
}

// readyLocked adds e, which holds a permit, to the ready set. c.mu must be
// held.
func (c *Cache[K, Req, Res, S]) readyLocked(e *entry[K, Req, Res, S]) {
	e.index = len(c.ready)
	c.ready = append(c.ready, e)
	c.readySvc = append(c.readySvc, e.svc)
	c.notifyLocked()
}

// unreadyLocked takes e out of the ready set, moving the last ready entry
// into its place. c.mu must be held.
func (c *Cache[K, Req, Res, S]) unreadyLocked(e *entry[K, Req, Res, S]) {
	i, last := e.index, len(c.ready)-1
	if i != last {
		moved := c.ready[last]
		c.ready[i], c.readySvc[i] = moved, moved.svc
		moved.index = i
	}
	var zero S
	c.ready[last], c.readySvc[last] = nil, zero
	c.ready, c.readySvc = c.ready[:last], c.readySvc[:last]
	e.index = -1
}

// removeLocked takes e out of the cache for good, broken with err if that
// is not nil, and stops its driver if it has one. It returns what the
// caller must finish once it has let go of the lock. c.mu must be held.
func (c *Cache[K, Req, Res, S]) removeLocked(e *entry[K, Req, Res, S], err error) *removal[K, Req, Res, S] {
	if e.gone {
		return nil
	}
	e.gone = true
	if e.index >= 0 {
		c.unreadyLocked(e)
	}
	if c.entries[e.key] == e {
		delete(c.entries, e.key)
	}
	if e.cancel != nil {
		e.cancel()
	}
	r := &removal[K, Req, Res, S]{e: e, held: e.permit, tell: !e.driving}
	e.permit = tower.Permit[Req, Res]{}
	if err != nil {
		r.failed = &Failed[K]{Key: e.key, Err: err}
	}
	c.notifyLocked()
	return r
}

// notifyLocked wakes those waiting for a change. c.mu must be held.
func (c *Cache[K, Req, Res, S]) notifyLocked() {
	if c.watched && !c.closed {
		close(c.changed)
		c.changed = make(chan struct{})
		c.watched = false
	}
}
