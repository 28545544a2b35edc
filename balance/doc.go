// Package balance spreads requests over a changing set of endpoints:
// [P2C], tower's power-of-two-choices balancer, and [RoundRobin], the
// baseline.
//
// A balancer is a [tower.Service] over endpoints found by a Discover
// (package discover). It keeps them in a ready cache (package readycache)
// that drives each one's readiness in the background: a ready endpoint
// holds a reservation, the permit its Ready returned. Ready picks one of
// the ready endpoints and returns its permit, so a request goes straight to
// the endpoint, and a caller that holds a permit holds exactly one
// endpoint's capacity.
//
// P2C draws two ready endpoints at random and takes the less loaded, as
// each reports through package load. With [load.PeakEwma] it steers away
// from a slow endpoint from its first slow answer, which round robin never
// does: with one backend of ten answering in 200ms instead of 2ms, round
// robin sends it a tenth of the requests and its p99 is 200ms, while P2C
// over PeakEwma keeps its p99 at the fast backends' 2ms (go run
// ./examples/balance).
//
//	endpoints := discover.NewList[load.Service[string, string]](
//		load.NewPeakEwma(a, 30*time.Millisecond, 10*time.Second),
//		load.NewPeakEwma(b, 30*time.Millisecond, 10*time.Second),
//	)
//	bal := balance.NewP2C(endpoints)
//	defer bal.Close()
//	rsp, err := tower.Call(ctx, bal, "hello")
//
// # Where it sits
//
// Per-endpoint middleware (a concurrency limit, a timeout, the load metric)
// goes inside, around each endpoint, where the Discover's function makes
// it. Middleware for the whole client (a timeout on the caller's wait,
// retries, a buffer) goes outside the balancer. A limit inside makes its
// endpoint not ready when full, and the balancer skips it; a retry outside
// sends its next attempt through the balancer, which picks an endpoint
// the request has not tried when its context has a [Tried]
// (towerhttp.BalancedTransport gives each request one).
//
// # No endpoints, failures, and bad input
//
// With no endpoint ready, Ready waits for one, as tower's balancer does,
// even when there are none at all; give ctx a deadline to bound the wait.
// Built [WithFailFast], a balancer that has no endpoints at all, ready or
// pending, once its Discover has answered, returns at once a permit whose
// Call fails with [ErrNoEndpoints]. The error comes from Call and not from
// Ready because an error from Ready means the service is broken for good,
// and a balancer without endpoints is not: endpoints may come.
//
// An endpoint whose Ready fails is dropped; an error from the Discover
// leaves the set as it was. Neither reaches the callers: both go to the
// handler given with [WithErrorHandler], and to the *slog.Logger given
// with [WithLogger]; by default a balancer writes no log. An Insert of a
// key the balancer has replaces its endpoint; an Insert with a nil
// service is reported and ignored. The balancer never panics on what its
// Discover sends.
//
// # Panics
//
// An endpoint whose Ready panics fails its readiness: it is dropped, and
// the error handler gets a *readycache.Failed of a *[tower.PanicError]
// (the caller that was taking its permit gets the permit). A Discover
// whose Next panics on the balancer's goroutine is in a state no one
// knows: the error handler gets a *[DiscoverError] of a *tower.PanicError,
// and the balancer stops asking it for changes and keeps the endpoints it
// has, as at io.EOF. A panic in the error or removal handler on that
// goroutine is logged through log/slog's default logger, and the discovery
// goes on.
//
// Code that runs on a caller's goroutine panics to that caller, once the
// balancer has given back what it held for it: an endpoint's Load and the
// Rand, which P2C calls in Ready, a handler called in Ready or Close, and
// the Discover's Next and the handlers while the constructor applies the
// first changes (the constructor then lets go of the endpoints it took in).
//
// An endpoint that leaves the set, removed by the Discover, replaced,
// dropped for failing or by Close, goes to the handler given with
// [WithRemovalHandler], once the balancer is done with it: the place to
// close endpoints that hold connections, such as those a DNS Discover
// makes for each address it finds.
//
// # Outlier detection
//
// [WithOutlierDetection] makes a balancer eject, for a while, an endpoint
// whose calls fail more than the others': Envoy's outlier detection, its
// parameters and defaults included. A classifier says which calls failed,
// from their response and error. Two detectors eject:
//
//   - consecutive failures: an endpoint is ejected at the end of its 5th
//     failed call in a row ([ConsecutiveFailures]); a success starts the
//     count again;
//   - success rate: at the end of each 10s interval ([OutlierInterval]),
//     the endpoints that ended at least 100 calls in it
//     ([SuccessRateRequestVolume]) are compared, if there are at least 5
//     of them ([SuccessRateMinHosts]): one whose success rate is below
//     the mean less 1.9 standard deviations ([SuccessRateStdevFactor]) is
//     an outlier, and is ejected then, the worst first.
//
// An ejected endpoint is out for 30s ([BaseEjectionTime]) times the
// number of its ejections in a row, at most 300s ([MaxEjectionTime]); that
// multiplier goes down by one for each interval the endpoint stays in
// after it comes back. At most 10% of the endpoints are out at once
// ([MaxEjectedShare]), rounded down but at least one, as in Envoy: 5
// endpoints at 10% still let one out.
//
// An endpoint is ejected by making its Ready wait: the ready cache keeps it
// pending and no pick sees it. One that is ready when it is ejected stops
// being picked at once: the reservation it held is given back. When its
// time is up, its Ready returns on its own, at that instant, and it is
// picked again as soon as it is ready. An endpoint that leaves the set
// while out (removed by the Discover, failed, or by Close) frees its place
// in the share at once. Each ejection goes to the error handler
// ([WithErrorHandler]) and the logger ([WithLogger]) as an *[Ejection],
// and the sink of [WithMetrics] counts the endpoints out now
// ([metrics.Ejected]).
//
// Where it differs from Envoy's, on purpose:
//
//   - An endpoint comes back exactly when its time is up, from a timer;
//     Envoy lets it back at the first interval tick after, up to 10s
//     late.
//   - One endpoint alone is never ejected, nor the last one in: a
//     balancer has no panic mode that would send to ejected endpoints, so
//     ejecting them all would make requests wait. Envoy ejects a lone
//     host and then ignores its health in panic mode.
//   - Envoy checks its share before it ejects, and so ejects two of 15
//     hosts at 10%; here the share is never passed, except for the one
//     always allowed.
//   - An endpoint refused for the share stays a candidate: past its count
//     of failures, each further failure tries again, so it is ejected as
//     soon as there is room. Envoy ejects for consecutive failures only
//     when the count reaches the threshold.
//   - Success-rate outliers are ejected worst first, so the share goes to
//     those that fail most, not to the first in the list.
//   - A call made with a permit taken before an ejection, or ended while
//     the endpoint is out, does not count: an endpoint comes back with a
//     clean slate, and is not ejected again at once for calls it answered
//     before.
//   - An interval with no call ends runs no timer: an idle balancer does
//     no work.
//
// When every endpoint fails, the share still holds: one of 5 is out, in
// turn, and the requests go to the others, which answer with their
// failures. Outlier detection moves traffic away from the endpoints that
// fail more than the rest; it does not stop traffic to a service that
// fails everywhere (put a circuit breaker outside the balancer for that).
//
// The success rates compare endpoints against each other. Where all
// endpoints succeed nearly always, the standard deviation is small, and
// an endpoint at 99% among others at 100% is below 1.9 deviations (Envoy
// issue 18752): raise the factor or the volume where that is not wanted.
//
// Outlier detection adds no allocation to a request, and no lock while
// the endpoint succeeds: a call counts in per-endpoint atomic counters
// spread over cache lines. The success-rate evaluation runs on a timer
// goroutine at the end of an interval; a panic in what it calls (a
// handler, the sink) is logged, as on the discovery goroutine.
//
// # Goroutines
//
// A balancer runs one goroutine that reads its Discover, if the Discover
// has more to say after the balancer is built (a discover.List does not),
// and one per endpoint that is not ready (an ejected endpoint is not
// ready); with outlier detection, a timer evaluates each interval in
// which calls ended. Close stops them all and waits
// for them; Shutdown waits only as long as its context lasts, for a
// Discover or an endpoint that ignores its context, and leaves those to
// finish on their own.
package balance
