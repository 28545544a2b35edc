// Package readycache keeps a keyed set of endpoints and drives their
// readiness in the background, so that a load balancer can pick among the
// endpoints that are ready now: tower's ReadyCache. Make a [Cache] with
// [New], Push endpoints into it, and Take a ready one's permit with a
// [Picker] (package balance's P2C and RoundRobin are Pickers).
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
// Each endpoint is ready or pending. A ready endpoint holds the permit its
// Ready returned until a caller takes it, or the endpoint is evicted or
// replaced, or the cache is closed. A pending endpoint has a goroutine, a
// driver, waiting in its Ready, so readiness is driven whether requests
// come or not. Before starting a driver, on Push and after each take, the
// cache asks the endpoint with a done context ([tower.ReadyNow]): one with
// capacity to spare is ready again at once and costs no goroutine.
//
// An endpoint whose Ready fails is broken for good (the readiness
// contract): the cache removes it and reports a *[Failed]. A panic in an
// endpoint's Ready is the same failure: no panic of an endpoint's Ready
// leaves the cache. A ready endpoint is not watched: a break shows at its
// next Ready, once its permit has been taken, and that permit stays the
// caller's.
//
// A panic in a handler or a Picker goes up to the caller that made the
// cache call it, once the cache has given back every reservation it held
// for that call; the cache stays as consistent as if the handler had
// returned. On a driver, which has no caller, it is logged through
// log/slog's default logger, and the driver carries on.
package readycache
