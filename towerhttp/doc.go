// Package towerhttp puts tower stacks in front of net/http handlers and
// behind net/http clients. Start with [NewHandler], an http.Handler that
// serves each request through a stack around the handler it wraps, and
// [NewTransport], an http.RoundTripper that sends each request through a
// stack per host; [ServerStack] and [ClientStack] declare those stacks
// without type arguments, and [BalancedTransport] spreads requests over
// several backends. In every list of layers the first one is the
// outermost: it sees the request first.
//
//	h := towerhttp.NewHandler(mux, tower.Stack(
//		loadshed.NewLayer[*http.Request, towerhttp.Response](),        // turn away what the limit cannot take now
//		timeout.NewLayer[*http.Request, towerhttp.Response](time.Second), // each for at most a second
//		limit.NewConcurrencyLayer[*http.Request, towerhttp.Response](64), // at most 64 in the handler
//	))
//	client := &http.Client{Transport: towerhttp.NewTransport(http.DefaultTransport,
//		limit.NewConcurrencyLayer[*http.Request, *http.Response](16))} // 16 per host
//
// Put the Timeout above the limits, as here: no Timeout times the wait for
// a limit's permit, which happens in Ready, and a call that a Timeout in
// Abandon mode gives up on keeps the permit of a limit below it until its
// handler returns, so that the limit counts the handlers that really run.
//
// # Server
//
// A server stack's request is the *http.Request and its response a
// [Response]: the handler writes to the ResponseWriter itself, under the
// context of the stack's call, which a Timeout above cancels.
//
// A handler blocked reading a slow body does not see its context end, so
// the Handler also ends body reads at that context's deadline, through
// http.ResponseController; a handler that sets its own read deadline takes
// over. A server with a ReadTimeout is left to it: keep ReadTimeout no
// longer than the stack's Timeout, or leave it unset and set
// ReadHeaderTimeout.
//
// # Client
//
// A client stack's request is the *http.Request and its response the
// *http.Response; the leaf sends the request with the base RoundTripper.
// [NewRetryPolicy] retries as HTTP allows; [Failure] and [Accepted]
// classify results for a breaker, outlier detection or a throttle. The
// request's body is closed even when no attempt sends it, as a
// RoundTripper must.
//
// Every response the leaf got that the caller does not get (retried
// attempts, hedges that lost, late ones a Timeout abandoned) is discarded:
// a body that declares at most 4 KiB is drained, so that its connection is
// reused, and any other is closed unread; none is, if a layer returns a
// response it built itself.
//
// A layer's context (a Timeout's, a Hedge's) ends when its call returns,
// with the response's headers, so the body is read under the request's own
// context: a Timeout in a client stack times the round trip to the
// headers, as tower's does; bound the whole exchange with a deadline on
// the request's context or http.Client.Timeout. Likewise a permit is held
// until the headers are in, not while the body is read: bound connections
// with http.Transport.MaxConnsPerHost.
package towerhttp
