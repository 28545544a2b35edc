// Package readycache keeps a keyed set of endpoints and drives their
// readiness in the background, so that a load balancer can pick among the
// endpoints that are ready now: tower's ReadyCache.
//
// A [Cache] holds each endpoint as ready or pending. A ready endpoint holds
// a reservation, the permit its Ready returned, until a caller takes it,
// or the endpoint is evicted or replaced. A pending one has a goroutine
// waiting in its Ready; when the permit comes, it is ready. An endpoint
// with capacity to spare is ready again as soon as it is taken, without a
// goroutine: the cache asks it first with a done context.
//
//	c := readycache.New[string, Req, Res, tower.Service[Req, Res]](
//		readycache.WithFailureHandler(func(f *readycache.Failed[string]) {
//			log.Printf("endpoint %s removed: %v", f.Key, f.Err)
//		}))
//	defer c.Close()
//	c.Push("10.0.0.1:80", a)
//	c.Push("10.0.0.2:80", b)
//	key, p, err := c.Take(ctx, picker) // waits until one is ready
//	if err != nil {
//		return err
//	}
//	rsp, err := p.Call(ctx, req) // the permit is the caller's now
//
// Which ready endpoint Take takes is the [Picker]'s choice: package
// balance's P2C compares the loads of two at random, its RoundRobin takes
// them in turn.
//
// # Keys
//
// Keys are unique. Pushing a key that is in the cache replaces its
// endpoint at once: the old one is dropped and the reservation it held is
// released (tower keeps the old ready one until the new one is ready; here
// a replaced endpoint's reservation is given back as soon as it is
// replaced). Evict removes a key. Repoll gives back the reservation of a
// ready endpoint and asks it again, for an endpoint that has turned unfit
// while ready: package balance's outlier detection ejects one so.
//
// # Failures
//
// An endpoint whose Ready fails is broken for good (the readiness
// contract): the cache removes it and reports a *[Failed] with its key to
// the handler given with [WithFailureHandler]. A ready endpoint is not
// watched; if it breaks while ready, that shows at its next Ready, once
// its permit has been taken, and the permit taken is still good.
//
// An endpoint whose Ready panics fails the same way, wherever the cache
// asks it, on a goroutine of its own or on the caller's: the panic is
// recovered, and the *Failed reported carries a *[tower.PanicError] with
// the panic's value and stack. No panic of an endpoint's Ready leaves the
// cache, and a permit taken just before it is the caller's.
//
// Whatever the way an endpoint leaves (evicted, replaced, failed or
// closed), the handler given with [WithRemovalHandler] hears of it once
// the cache has released its reservation and stopped using it. A panic in
// a handler goes up to the caller that made the cache call it (of Push,
// Evict, TryTake, Take or Close), with every reservation given back; on
// the cache's own goroutines it is logged through log/slog's default
// logger, and the cache carries on.
//
// # Goroutines
//
// There is one goroutine per pending endpoint, and none for a ready one.
// Readiness is thus driven whether requests come or not: a pending
// endpoint is ready as soon as its Ready returns, not at the next request
// (tower#824: a Balance behind a Buffer promoted its pending endpoints only
// when a request reached it).
// Evicting or replacing a pending endpoint ends its goroutine's wait, by
// cancelling the context its Ready was given. Close ends them all and
// waits for them: no goroutine outlives Close. Shutdown waits only as long
// as its context lasts, for an endpoint whose Ready ignores its context;
// such a goroutine then finishes on its own.
package readycache
