// Package limit holds back work before it reaches a service. Most users
// want [NewConcurrency], which bounds the requests in flight, or
// [NewBucket], a token bucket like golang.org/x/time/rate's Limiter, which
// bounds their rate. [NewRate] is tower's fixed window (RateLimit);
// [NewKeyed] is a token bucket per key drawn from the request.
//
//	svc := stack.New[string, string]().
//		Layer(timeout.NewLayer[string, string](150 * time.Millisecond)).
//		Layer(limit.NewConcurrencyLayer[string, string](10)).
//		Layer(limit.NewRateLayer[string, string](100, time.Second)).
//		Service(handler)
//
//	p, err := svc.Ready(ctx) // waits for a permit, then a place in the window
//	if err != nil {
//		return err // ctx.Err(), or the inner service is broken
//	}
//	defer p.Release() // gives both back if Call never runs
//	rsp, err := p.Call(ctx, "hello")
//
// Concurrency, Bucket and Rate make callers wait in Ready, first come
// first served, so a limited caller is held back before it sends anything:
// that is backpressure. A free permit, place or token is taken even with a
// done ctx, so a load shedder outside a limit, which asks Ready with a
// done ctx, turns waiting into rejection. A layer gives each service it
// wraps a limit of its own, except [NewSharedConcurrencyLayer].
//
// # Differences from x/time/rate
//
// A Bucket is x/time/rate's Limiter used through Wait, except:
//
//   - No token before ctx's deadline: Ready waits until the deadline and
//     returns ctx.Err() (Wait fails at once), since Ready's other errors
//     mean a service broken for good.
//   - A done ctx with a token free: Ready takes it (Wait returns
//     ctx.Err()), since a done ctx is how LoadShed asks "ready now?".
//   - Waiters hold no instant until their token is there: when one gives
//     up, the next moves up to the freed token at once.
//   - A permit released unused gives its token back at any time, if no
//     token was taken after it: a request never sent should not lower the
//     rate.
//   - The rate is num per period, the interval rounded up to the
//     nanosecond; there is no infinite rate, and a burst below 1 panics.
//
// # Placement
//
// The first layer in a list is the outermost.
//
//   - Timeout > limit, or limit > Timeout: the Timeout times only the inner
//     Call, not the wait in Ready. Bound a caller's whole wait with a ctx
//     deadline ([tower.Call] sets one).
//   - Buffer > limit: the Buffer's turn waits in the limit's Ready during
//     the caller's Call; limit > Buffer: the Buffer's queue counts as in
//     flight. Package buffer's doc gives the counts.
//   - Keyed > Concurrency: a key's wait ([WithMaxWait]) holds the permit;
//     keep it short, or none.
package limit
