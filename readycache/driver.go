package readycache

import (
	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
)

// takeLocked moves e's permit out to the caller, and asks e for its next
// reservation at once. If e turns out broken, the permit taken, granted
// before, is still the caller's. c.mu must be held.
func (c *Cache[K, Req, Res, S]) takeLocked(e *entry[K, Req, Res, S]) (tower.Permit[Req, Res], *removal[K, Req, Res, S]) {
	p := e.permit
	e.permit = tower.Permit[Req, Res]{}
	return p, c.refillLocked(e, p)
}

const whereRefill = "an endpoint's Ready, asked by a ready cache on its caller's goroutine"

// refillLocked asks e, which holds no permit, whether it is ready now: if
// not, a driver waits for it. A ready e keeps its place in the ready set.
// A Ready that fails or panics removes e. One that calls runtime.Goexit
// removes it too, and ends the caller's goroutine: a goroutine of the
// cache's then releases held, the permit the caller had in hand, and tells
// the handlers. c.mu must be held.
func (c *Cache[K, Req, Res, S]) refillLocked(e *entry[K, Req, Res, S], held tower.Permit[Req, Res]) (failed *removal[K, Req, Res, S]) {
	asked := false
	defer func() {
		if asked {
			return
		}
		v := recover()
		failed = c.removeLocked(e, guard.Recovered(whereRefill, v))
		if v == nil { // runtime.Goexit: nobody returns to finish
			c.drivers++
			go c.finishOrphaned(failed, held)
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
	c.drivers++
	e.driving = true
	go c.drive(e)
	return nil
}

const whereDriver = "an endpoint's Ready, on a ready cache's driver"

// drive waits in e's Ready, again after a Repoll. An error, a panic or a
// runtime.Goexit removes e, or, if e has left already, a panic is logged.
func (c *Cache[K, Req, Res, S]) drive(e *entry[K, Req, Res, S]) {
	defer c.driverDone()
	returned := false
	defer func() {
		if !returned {
			perr := guard.Recovered(whereDriver, recover())
			if _, in := c.driven(e, tower.Permit[Req, Res]{}, perr); !in {
				guard.Orphan(perr)
			}
		}
	}()
	for again := true; again; {
		returned = false
		p, err := e.svc.Ready(e.ctx)
		returned = true
		again, _ = c.driven(e, p, err)
	}
}

// driven settles e, whose Ready on its driver returned p or err, and
// reports whether the driver must ask again, Repoll having been called
// meanwhile, and whether e was still in the cache.
func (c *Cache[K, Req, Res, S]) driven(e *entry[K, Req, Res, S], p tower.Permit[Req, Res], err error) (again, in bool) {
	c.mu.Lock()
	var r *removal[K, Req, Res, S]
	var held tower.Permit[Req, Res]
	in = !e.gone
	switch {
	case !in:
		// e left while its Ready returned: the reservation is nobody's,
		// and its removal left telling the handler to this goroutine.
		e.driving = false
		r = &removal[K, Req, Res, S]{e: e, held: p, tell: true}
	case err != nil:
		e.driving = false
		r = c.removeLocked(e, err)
	case e.repoll:
		// This permit may predate what made the endpoint unfit: it goes
		// back, and the driver asks again, off the lock, as Ready may
		// block, fail, panic or end the goroutine.
		e.repoll = false
		held, again = p, true
	default:
		e.driving = false
		e.permit = p
		c.readyLocked(e)
	}
	c.mu.Unlock()
	guard.Orphan(guard.Call(whereRelease, held.Release))
	if r != nil {
		c.finishOnDriver(r)
	}
	return again, in
}

// finishOrphaned finishes r, if not nil, and releases held, for a caller
// whose goroutine ended in an endpoint's Ready; it counts as a driver.
func (c *Cache[K, Req, Res, S]) finishOrphaned(r *removal[K, Req, Res, S], held tower.Permit[Req, Res]) {
	defer c.driverDone()
	guard.Orphan(guard.Call(whereRelease, held.Release))
	if r != nil {
		c.finishOnDriver(r)
	}
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

func (c *Cache[K, Req, Res, S]) readyLocked(e *entry[K, Req, Res, S]) {
	e.index = len(c.ready)
	c.ready = append(c.ready, e)
	c.readySvc = append(c.readySvc, e.svc)
	c.notifyLocked()
}

// unreadyLocked swaps the last ready entry into e's place.
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

// removeLocked takes e out of the cache for good, failed with err if not
// nil, and returns what the caller must finish without the lock.
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
	e.cancel()
	r := &removal[K, Req, Res, S]{e: e, held: e.permit, tell: !e.driving}
	e.permit = tower.Permit[Req, Res]{}
	if err != nil {
		r.failed = &Failed[K]{Key: e.key, Err: err}
	}
	c.notifyLocked()
	return r
}

func (c *Cache[K, Req, Res, S]) notifyLocked() {
	if c.watched && !c.closed {
		close(c.changed)
		c.changed = make(chan struct{})
		c.watched = false
	}
}

// Repoll asks the endpoint under key for its readiness again, for one that
// has turned unfit while ready (one a balancer's outlier detection has just
// ejected, say), and reports whether key is in the cache. A ready
// endpoint's permit is taken back and released, and the endpoint asked
// again as after a Take: it stays ready only if its Ready grants a new
// permit at once. If a driver is in its Ready, the permit that Ready
// returns is released instead, and the endpoint asked again.
func (c *Cache[K, Req, Res, S]) Repoll(key K) bool {
	held, failed, ok := c.repoll(key)
	defer c.finish(failed)
	held.Release()
	return ok
}

func (c *Cache[K, Req, Res, S]) repoll(key K) (held tower.Permit[Req, Res], failed *removal[K, Req, Res, S], ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if e == nil {
		return held, nil, false
	}
	if e.index < 0 {
		// Pending: its driver is in Ready, and asks again once it returns.
		e.repoll = true
		return held, nil, true
	}
	held = e.permit
	e.permit = tower.Permit[Req, Res]{}
	c.unreadyLocked(e)
	return held, c.refillLocked(e, held), true
}
