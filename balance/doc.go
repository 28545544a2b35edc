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
// sends its next attempt through the balancer, which may pick another
// endpoint.
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
// # Goroutines
//
// A balancer runs one goroutine that reads its Discover, if the Discover
// has more to say after the balancer is built (a discover.List does not),
// and one per endpoint that is not ready. Close stops them all and waits
// for them; Shutdown waits only as long as its context lasts, for a
// Discover or an endpoint that ignores its context, and leaves those to
// finish on their own.
package balance
