package readycache

import "github.com/towergo/tower"

// Repoll makes the cache ask the endpoint under key for its readiness
// again, for an endpoint that has stopped being fit for requests while it
// was ready: one that a balancer's outlier detection has just ejected,
// say. If the endpoint is ready, its permit is taken back and released,
// and it is asked whether it is ready now, as after a Take: it stays ready
// only if its Ready grants a new permit at once, and is pending otherwise,
// so that no Take picks it until its Ready has granted one. If a driver is
// waiting in its Ready, the permit that Ready returns is released instead
// of making the endpoint ready, and the endpoint is asked again. Repoll
// reports whether key is in the cache.
//
// A Ready that fails or panics when asked removes the endpoint, as it
// would after a Take; the handlers are called on Repoll's goroutine, and a
// panic in one goes up to Repoll's caller, the permit released.
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
