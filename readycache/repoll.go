package readycache

import "github.com/towergo/tower"

// Repoll asks the endpoint under key for its readiness again, for one that
// has turned unfit while ready (one a balancer's outlier detection has just
// ejected, say), and reports whether key is in the cache. A ready
// endpoint's permit is taken back and released, and the endpoint asked
// again as after a Take: it stays ready only if its Ready grants a new
// permit at once. If a driver is in its Ready, the permit that Ready
// returns is released instead, and the endpoint asked again. A Ready that
// fails removes the endpoint, as after a Take.
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
	return held, c.refillLocked(e), true
}
