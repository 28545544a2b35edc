package readycache

import (
	"context"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
)

// takeLocked moves e's permit out to the caller, and asks e for its next
// reservation at once. It returns e's removal if e turned out broken; the
// permit taken, granted before, is still the caller's. c.mu must be held.
func (c *Cache[K, Req, Res, S]) takeLocked(e *entry[K, Req, Res, S]) (tower.Permit[Req, Res], *removal[K, Req, Res, S]) {
	p := e.permit
	e.permit = tower.Permit[Req, Res]{}
	return p, c.refillLocked(e)
}

// whereRefill is where the cache asks an endpoint whether it is ready now.
const whereRefill = "an endpoint's Ready, asked by a ready cache on its caller's goroutine"

// refillLocked asks e, which holds no permit, whether it is ready now. If it
// is, e is ready (in place, if it was already in the ready set); if it is
// not, e is pending and a driver waits for it; if it is broken, or its
// Ready panics, e is removed and its removal returned. c.mu must be held.
func (c *Cache[K, Req, Res, S]) refillLocked(e *entry[K, Req, Res, S]) (failed *removal[K, Req, Res, S]) {
	asked := false
	defer func() {
		if !asked {
			// Ready panicked: e failed its readiness.
			failed = c.removeLocked(e, guard.Recovered(whereRefill, recover()))
		}
	}()
	p, ok, err := tower.ReadyNow[Req, Res](e.svc)
	asked = true
	if ok {
		e.permit = p
		if e.index < 0 {
			c.readyLocked(e)
		}
		return nil
	}
	if err != nil {
		return c.removeLocked(e, err)
	}
	if e.index >= 0 {
		c.unreadyLocked(e)
	}
	if e.ctx == nil {
		e.ctx, e.cancel = context.WithCancel(c.root)
	}
	c.drivers++
	e.driving = true
	go c.drive(e)
	return nil
}

// whereDriver is where a driver waits in an endpoint's Ready.
const whereDriver = "an endpoint's Ready, on a ready cache's driver"

// drive waits in e's Ready. The permit makes e ready, unless e has left the
// cache meanwhile. An error, a panic or a runtime.Goexit removes e and is
// reported, or, if e has left already, a panic is logged.
func (c *Cache[K, Req, Res, S]) drive(e *entry[K, Req, Res, S]) {
	defer c.driverDone()
	returned := false
	defer func() {
		if !returned {
			perr := guard.Recovered(whereDriver, recover())
			if !c.driven(e, tower.Permit[Req, Res]{}, perr) {
				guard.Orphan(perr)
			}
		}
	}()
	p, err := e.svc.Ready(e.ctx)
	returned = true
	c.driven(e, p, err)
}

// driven ends e's driver, whose Ready returned p or err, and reports
// whether e was still in the cache.
func (c *Cache[K, Req, Res, S]) driven(e *entry[K, Req, Res, S], p tower.Permit[Req, Res], err error) bool {
	c.mu.Lock()
	e.driving = false
	var r *removal[K, Req, Res, S]
	var held tower.Permit[Req, Res]
	gone := e.gone
	if gone {
		// e left while its Ready returned: the reservation is nobody's,
		// and its removal left telling the handler to this goroutine.
		r = &removal[K, Req, Res, S]{e: e, held: p, tell: true}
	} else if err != nil {
		r = c.removeLocked(e, err)
	} else if e.repoll {
		// Repoll was called while Ready waited: this permit may predate
		// what made the endpoint unfit, so it goes back, and the endpoint
		// is asked again.
		e.repoll = false
		held = p
		r = c.refillLocked(e)
	} else {
		e.permit = p
		c.readyLocked(e)
	}
	c.mu.Unlock()
	if held.Held() {
		orphan(whereRelease, held.Release)
	}
	if r != nil {
		c.finishOnDriver(r)
	}
	return !gone
}

// driverDone counts a driver out once it has done everything, its removal
// handler's call included.
func (c *Cache[K, Req, Res, S]) driverDone() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drivers--
	if c.drivers == 0 && c.closed {
		close(c.stopped)
	}
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
