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
// A balancer is a [tower.Service] over the endpoints a Discover (package
// discover) finds. A ready cache (package readycache) drives each
// endpoint's readiness in the background and holds each ready one's
// permit; Ready picks a ready endpoint and returns that permit, so the
// request goes straight to the endpoint and a caller holding a permit
// holds exactly one endpoint's capacity. With no endpoint ready, Ready
// waits, even when there are none at all, as tower's balancer does; give
// ctx a deadline, or see [WithFailFast].
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
// An endpoint whose Ready fails or panics is dropped, as a
// *readycache.Failed (of a *[tower.PanicError] for a panic); a caller that
// took its permit just before keeps it. An error from the Discover leaves
// the set as it was, as a *[DiscoverError]; a panic in its Next on the
// balancer's goroutine is a *DiscoverError of a *tower.PanicError, and the
// balancer stops asking that Discover and keeps its endpoints, as at
// io.EOF. An Insert of a key the balancer has replaces its endpoint; one
// with a nil service is reported and ignored. None of these reaches a
// caller: they go to [WithErrorHandler] and [WithLogger]. An endpoint that
// leaves the set goes to [WithRemovalHandler], the place to close it.
//
// Code run on a caller's goroutine panics to that caller, once the
// balancer has given back what it held for it: an endpoint's Load and the
// Rand in Ready, a handler called in Ready or Close, and the Discover's
// Next and the handlers while the constructor applies the first changes
// (the constructor then lets go of the endpoints it took in). A panic in a
// handler or the metrics sink on the balancer's own goroutines is logged
// through log/slog's default logger, and the balancer goes on.
//
// # Outlier detection
//
// [WithOutlierDetection] ejects, for a while, an endpoint whose calls fail
// more than the others', with Envoy's two detectors and defaults: too many
// failures in a row ([ConsecutiveFailures]), or a success rate over an
// interval too far below the others' ([SuccessRateStdevFactor]). The
// options' docs give the rules. An ejected endpoint's Ready waits, so the
// ready cache keeps it pending and no pick sees it; a ready one gives back
// its reservation at once. It comes back exactly when its time is up, from
// a timer, with a clean slate: calls made with a permit taken before the
// ejection, or ended while it was out, do not count. One that leaves the
// set while out frees its place in the share at once.
//
// Success rates compare endpoints with each other: when all fail, the
// share still holds and traffic still flows (put a circuit breaker outside
// for that), and when all nearly always succeed, one at 99% among others
// at 100% is an outlier; raise the factor or the volume if that is not
// wanted. A call adds no allocation, and no lock while it succeeds.
//
// # Goroutines
//
// A balancer runs one goroutine that reads its Discover, if it has more to
// say after construction (a discover.List does not), one per endpoint that
// is not ready (an ejected endpoint is not ready), and, with outlier
// detection, a timer at the end of each interval in which calls ended.
// Close stops them all and waits for them; Shutdown waits only as long as
// its context lasts.
package balance
