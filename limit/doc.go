// Package limit limits how much work reaches a service: [Concurrency]
// bounds the requests in flight at once, and [Bucket] and [Rate] bound the
// requests let through per period, with a token bucket and with tower's
// fixed window. They make callers wait in Ready, so a limited caller is
// held back before it sends anything: that is backpressure.
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
// semantics (tower's RateLimit), not a token bucket: it is there for code
// that wants tower's behaviour, and a [Bucket] is what users of
// golang.org/x/time/rate expect. A window opens at the first Ready after the
// previous window ended (or, if callers are waiting, at the instant it
// ended), lasts per, and has num places. Each Ready takes a place; when the
// window is full, Ready waits, first come first served, until it ends, and
// the next window's num places go to the num oldest waiters. So requests
// come in bursts of up to num, never more than num within one window. A
// place released unused goes back to its window if that window is still
// open.
//
// That bound holds within a window, not within every stretch of time as
// long as a window: across a window's end, a fixed window lets twice num
// through at once. With
// 100 per second, 100 requests at 999ms into a window and 100 more at 1s,
// when the next window opens, are 200 within 1ms. A Bucket of 100 per
// second with a burst of 100 lets the first 100 through, and then one
// every 10ms.
//
// One Rate is shared by all its callers and enforces one rate for all of
// them; tower's RateLimit cannot be cloned for that reason.
//
// # Token bucket
//
// A [Bucket] holds up to burst tokens, starts full, and gains a token every
// per/num; each request takes one. So within any stretch of time d it lets
// through at most burst + d/(per/num) requests: a burst at once after an
// idle spell, then a steady rate. That is x/time/rate's Limiter, whose
// NewLimiter(r, b) is NewBucket(inner, n, per, b) with n/per = r. Choose
// burst for what the inner service takes at once: burst 1 spaces requests
// evenly, per/num apart; burst num lets a period's worth through at once
// after the limit was idle for a period.
//
// When the bucket is empty, Ready waits, first come first served, until
// exactly the instant its token is there; a caller that finds a token while
// others wait queues behind them, and a caller with a done ctx is refused
// at once. A token taken and released unused goes back if no token was
// taken after it, to the oldest waiter if anyone waits, or else to the
// bucket, which never holds more than burst. A token taken after it holds
// the next instant; giving the earlier one back would hand that instant to
// a second caller, two requests where the bucket allows one, so it is lost
// instead. Released in the reverse of the order taken, as deferred
// Releases are, every token goes back. Like a Rate, one Bucket is shared
// by all its callers, and a layer gives each service it wraps a bucket of
// its own.
//
// # Differences from x/time/rate
//
// A Bucket is x/time/rate's Limiter used through Wait, but for these, each
// of which a caller porting from x/time/rate may meet:
//
//   - A token not there before ctx's deadline: Wait fails at once; Ready
//     waits until the deadline and returns ctx.Err(), since the contract
//     keeps Ready's other errors for a service broken for good. A caller
//     that would rather not wait puts a LoadShed outside, or asks with a
//     done ctx.
//   - A done ctx with a token free: Wait returns ctx.Err(); Ready takes
//     the token, since a done ctx is how LoadShed asks "ready now?".
//   - A waiter that gives up: Wait's reservations each keep the instant
//     they were given, so the waiters behind keep waiting and the freed
//     token goes to whoever comes next. Ready's waiters hold no instant
//     until their token is there: the next one moves up to the freed token
//     at once, and a newcomer still queues behind it.
//   - A permit released unused after its token's instant: Cancel gives
//     nothing back once the reservation's instant has passed; a Bucket
//     gives the token back at any time if no token was taken after it, as
//     if it had never been taken: a permit reserved and never called sent
//     nothing, and counting it would lower the rate that real requests get.
//   - Tokens taken at one instant and released unused at that instant in
//     the order taken: Cancel gives each back; a Bucket gives back only
//     the last taken (see above). A bucket whose state is one instant can
//     tell only the last token taken from the others, and only that one
//     goes back without breaking the bound over every stretch of time.
//   - The rate is num per period with the interval rounded up to the
//     nanosecond, never above num per period; x/time/rate's is a float of
//     tokens per second. A burst of 0 and an infinite rate are not limits
//     here: NewBucket panics for a burst below 1.
//
// # Per-key limits
//
// A [Keyed] limits each key drawn from the requests (a tenant, a client's
// address) to num requests per period with bursts of up to burst: a token
// bucket per key, made when the key is first seen. The key is in the
// request, which only Call has, so a Keyed's Ready is its inner service's
// Ready, and the key's limit is applied in Call: a request over its key's
// limit is refused at once with a [*KeyLimitError] (tower.IsThrottled: a
// 429 through package towerhttp, with how long until the key's next
// token), or, with [WithMaxWait], waits in Call for its key's next token
// while holding the inner permit. Keys live in a sharded table bounded by
// [WithMaxKeys] ([DefaultMaxKeys] by default): a key whose bucket is full
// again is the same as one never seen and is dropped, a few per request;
// at the cap a new key gets in, and the key nearest full gives up its
// place, forgiven at most what it still owed. A flood of a million
// distinct keys holds the table at its cap, about 130 bytes a key.
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
//   - Keyed > Concurrency: the wait for the permit happens in Ready, and a
//     key's wait (with WithMaxWait) in Call, holding the permit: keep the
//     max wait short, or none.
//
// A load shedder outside a limit turns waiting into rejection: it asks the
// limit's Ready with a done context, which is granted only when a permit,
// place or token is free now.
package limit
