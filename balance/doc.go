// Package balance spreads requests over a changing set of endpoints. Use
// [NewP2C] over endpoints that report their load ([load.NewPeakEwma]):
// tower's power-of-two-choices balancer, which avoids a slow endpoint from
// its first slow answer. [NewRoundRobin] is the baseline.
//
//	endpoints := discover.NewList[load.Service[string, string]](
//		load.NewPeakEwma(a, 30*time.Millisecond, 10*time.Second),
//		load.NewPeakEwma(b, 30*time.Millisecond, 10*time.Second),
//	)
//	bal := balance.NewP2C(endpoints)
//	defer bal.Close()
//	rsp, err := tower.Call(ctx, bal, "hello")
//
// A balancer keeps the endpoints its Discover (package discover) finds in
// a ready cache (package readycache), which drives each one's readiness in
// the background. Ready returns a ready endpoint's own permit, so a caller
// holding a permit holds exactly one endpoint's capacity. With no endpoint
// ready, even with none at all, Ready waits, as tower's balancer does:
// give ctx a deadline, or see [WithFailFast].
//
// Per-endpoint middleware (a concurrency limit, a timeout, the load
// metric) goes inside, where the Discover makes each endpoint: a full
// limit makes its endpoint not ready, and the balancer skips it. Middleware
// for the whole client (a deadline, retries, a buffer) goes outside; a
// retry picks an endpoint the request has not tried if its context has a
// [Tried].
//
// # Failures and panics
//
// No failure of an endpoint or of the Discover reaches a caller: they go
// to [WithErrorHandler] and [WithLogger]. An endpoint whose Ready fails or
// panics is dropped; a caller that took its permit just before keeps it.
// After an error from the Discover the set stays as it was; after a panic
// in its Next on the balancer's goroutine, the balancer also stops asking
// it, as at io.EOF. An Insert with a nil service is reported and ignored.
// An endpoint that leaves the set goes to [WithRemovalHandler], the place
// to close it.
//
// Code run on a caller's goroutine panics to that caller, once the
// balancer has given back what it held for it: an endpoint's Load and the
// Rand in Ready, a handler called in Ready or Close, and the Discover's
// Next and the handlers in the constructor (which then lets go of the
// endpoints it took in). A panic on the balancer's own goroutines is
// logged through log/slog's default logger, and the balancer goes on.
//
// # Goroutines
//
// A balancer runs one goroutine that reads its Discover, if it has more to
// say after construction (a discover.List does not), one per endpoint that
// is not ready (an ejected endpoint is not ready), and, with
// [WithOutlierDetection], a timer at the end of each interval in which
// calls ended. Close stops them all and waits for them; Shutdown waits
// only as long as its context lasts.
package balance
