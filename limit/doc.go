// Package limit limits how much work reaches a service: [Concurrency]
// bounds the requests in flight at once, and [Rate] bounds the requests let
// through per period. Both make callers wait in Ready, so a limited caller
// is held back before it sends anything: that is backpressure.
//
//	svc := tower.NewBuilder[string, string]().
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
// # Concurrency
//
// A [Concurrency] hands out permits from a [Semaphore]. Ready takes a
// permit, waiting if none is free, and only then asks the inner service; a
// caller waiting for a permit therefore holds nothing of the inner
// service's. The permit is held until the call returns (with a response, an
// error, or a panic) or the reservation is released unused. Waiters are
// served first come, first served, and a permit given back wakes only the
// oldest waiter.
//
// Each Concurrency has a Semaphore of its own, unless it is built with
// [NewConcurrencyWith] or [NewSharedConcurrencyLayer]: then every service
// built on the same Semaphore counts against one limit, as tower's
// GlobalConcurrencyLimitLayer does. [Semaphore.Available] and
// [Semaphore.Waiting] report its state.
//
// # Rate
//
// A [Rate] lets num requests through per period with tower's fixed-window
// semantics, not a token bucket. A window opens at the first Ready after the
// previous window ended (or, if callers are waiting, at the instant it
// ended), lasts per, and has num places. Each Ready takes a place; when the
// window is full, Ready waits, first come first served, until it ends, and
// the next window's num places go to the num oldest waiters. So requests
// come in bursts of up to num, never more than num within one window. A
// place released unused goes back to its window if that window is still
// open.
//
// One Rate is shared by all its callers and enforces one rate for all of
// them; tower's RateLimit cannot be cloned for that reason.
//
// # Placement
//
// In every list of layers the first one is the outermost: it sees the
// request first. Because a limit's waiting happens in Ready, where the limit
// sits decides which other layers see the wait:
//
//   - Timeout > limit: the Timeout's clock starts in Call, after Ready has
//     waited for the permit or the window, so the wait does not count
//     against the timeout. To bound a caller's whole wait, give the caller's
//     context a deadline ([tower.Call] does); Ready returns ctx.Err() when
//     it ends.
//   - limit > Timeout: the same; the Timeout times only the inner call, and
//     a timed-out call gives its permit back when it returns.
//   - Buffer > limit: the Buffer's Ready reserves only a queue slot, and its
//     worker waits in the limit's Ready on the caller's behalf, during the
//     caller's Call. A Timeout outside the Buffer therefore does count the
//     wait. A Buffer of bound 100 over a Concurrency of 10 admits up to 110
//     requests, 100 queued and 10 in flight.
//   - limit > Buffer: the limit counts the Buffer's queue as in flight, so a
//     Concurrency of 10 over a Buffer of 100 admits only 10.
//
// A load shedder outside a limit turns waiting into rejection: it asks the
// limit's Ready with a done context, which is granted only when a permit or
// place is free now.
package limit
