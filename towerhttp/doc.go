// Package towerhttp puts tower stacks in front of net/http handlers and
// behind net/http clients.
//
// On the server side, a [Handler] is an http.Handler that serves each
// request through a stack around the handler it wraps; on the client
// side, a [Transport] is an http.RoundTripper that sends each request
// through a stack per host, and a [BalancedTransport] spreads requests
// over several backends with the power of two choices. In every list of
// layers the first one is the outermost: it sees the request first.
//
//	h := towerhttp.NewHandler(mux, tower.Stack(
//		loadshed.NewLayer[*http.Request, towerhttp.Response](),        // turn away what the limit cannot take now
//		timeout.NewLayer[*http.Request, towerhttp.Response](time.Second), // each for at most a second
//		limit.NewConcurrencyLayer[*http.Request, towerhttp.Response](64), // at most 64 in the handler
//	))
//	srv := &http.Server{Addr: ":8080", Handler: h}
//
//	client := &http.Client{Transport: towerhttp.NewTransport(http.DefaultTransport,
//		limit.NewConcurrencyLayer[*http.Request, *http.Response](16))} // 16 per host
//
// Put the Timeout above the limits, as here: the wait for the limit's
// permit happens in Ready, which no Timeout times, so the Timeout measures
// the handler alone wherever it sits; and above the limit, a call that a
// Timeout in Abandon mode gives up on keeps its permit until its handler
// returns, so the limit counts the handlers that really run. Below the
// limit, the permit would come back when the Timeout answers, and the
// handlers it abandoned would run on beyond the limit.
//
// go run ./examples/overload shows what the server stack above does for a
// server offered twice the load it can serve.
//
// # The server side
//
// A server stack's request is the *http.Request and its response a
// [Response], which only reports the status the handler sent: the handler
// writes its response to the ResponseWriter itself, as always. The leaf
// of the stack, [HandlerService], runs the handler with the request it is
// called with, carrying the context it is called with: a Timeout above it
// cancels the request's context, as http.TimeoutHandler does.
//
// For each request, the Handler:
//
//  1. answers 413 at once if the request declares a body longer than the
//     limit of [WithMaxBodyBytes];
//  2. waits for the stack's Ready under the request's context: a limit
//     makes the request wait here, a load shedder decides here, before
//     anything of the request, its body included, has been read;
//  3. calls the permit, which runs the handler, and bounds the reading of
//     the request's body by the handler's deadline (see below).
//
// # A limit with no number to tune
//
// A ConcurrencyLimit needs the number of requests the handler can take at
// once, which nobody knows for sure and which changes with every deploy,
// neighbour and database. Package adaptive's limit finds it, from the
// latency and the drops of the requests it lets in, and under a LoadShed
// the server turns away at once what it cannot take in time:
//
//	protect := towerhttp.ServerStack().LoadShed().AdaptiveLimit(adaptive.Gradient2())
//	h := towerhttp.NewHandler(mux, protect,
//		towerhttp.WithPriority(towerhttp.PriorityHeader("X-Priority")))
//
// [WithPriority] gives each request a [tower.Priority] before the stack
// sees it; near its limit, the adaptive limit sheds low priority first
// and still admits critical requests. Set the priority from a header only
// where the header comes from a party you trust. go run ./examples/overload
// prints what this stack does next to a limit sized by hand, and go run
// ./examples/adaptive how it follows a server whose capacity changes.
//
// # Request bodies and deadlines
//
// A client that sends its body slowly would hold whatever the stack
// reserved for it (a limit's permit) for as long as it takes, whatever a
// Timeout says, since a handler blocked reading a body does not see its
// context end. So the Handler ends the reads of a request's body at the
// deadline of the context the handler runs with: a Timeout's, or the
// request's own. A read that reaches it fails with an error that wraps
// os.ErrDeadlineExceeded, as under http.Server.ReadTimeout; if the handler
// then writes nothing, the Handler answers 503 "request timed out".
//
// The deadline is set on the connection through http.ResponseController,
// as ReadTimeout is (a ResponseWriter without read deadlines,
// httptest.ResponseRecorder, gets none). On HTTP/2 it is the request's
// stream's, and ends with it. On HTTP/1, it is set when the handler starts
// if net/http has not read the body to its end, and stays set: what
// net/http reads of the body once the handler has answered, to use the
// connection again, fails at once if the deadline has passed, and net/http
// then closes the connection rather than wait for a slow client; net/http
// sets its own deadlines again for the connection's next request. Once the
// body has been read to its end, net/http waits on the connection for the
// next request, with no deadline, and one the Handler left there would end
// that wait, which net/http would take for a client that has gone, and
// cancel the contexts of the connection's later requests. So a body that
// something before the Handler read (ParseForm, a middleware that checks a
// signature and puts back a copy) or wrapped, of which the Handler cannot
// tell whether net/http has read it to its end, gets the deadline around
// each read of the handler's only. What net/http reads of the rest of such a
// body once the handler has answered is not bounded by the Handler, should
// the deadline pass between two reads.
//
// A handler that sets a read deadline of its own, with
// http.ResponseController, takes over from the Handler.
//
// A server with a ReadTimeout bounds bodies itself, from when it started
// reading the request, which the Handler cannot know: the Handler leaves
// them to it rather than loosen it. Keep ReadTimeout no longer than the
// stack's Timeout, or leave it unset (bound the headers with
// ReadHeaderTimeout) and let the Handler bound bodies.
//
// # Errors and status codes
//
// A stack that fails a request before the handler wrote anything answers
// through the error handler ([WithErrorHandler]; [WriteError] by
// default), with the status of [StatusCode]:
//
//   - 503 with Retry-After for loadshed.ErrOverloaded, a failed Ready
//     ([ReadyError]: an error from Ready that is not the request
//     context's means the stack is broken for good), a closed or failed
//     Buffer and a balancer without endpoints: the server cannot take the
//     request now. Retry-After says when to try again, in whole seconds:
//     [DefaultRetryAfter], one second, unless [WithRetryAfter] says
//     otherwise.
//   - 503 without Retry-After for timeout.ErrElapsed, and for a body that
//     did not come by the handler's deadline.
//   - 413 for a body over the limit.
//   - 500 for anything else, with the status text as body: an error's
//     message may say more than a client should know. (A panic that a
//     layer returns as a *tower.PanicError gets no answer at all: see
//     Panics below.)
//
// timeout.ErrElapsed is 503, as http.TimeoutHandler answers, and not 504
// Gateway Timeout: 504 says that an upstream server did not answer a
// gateway in time, and a Handler is usually the origin server. A 504 from
// it would read, to the proxies in front, as their own timeout, and
// operators could no longer tell which hop ran out of time. A handler
// that is itself a proxy (httputil.ReverseProxy) may prefer 504: give an
// error handler that maps timeout.ErrElapsed to it.
//
// A request whose client has gone (its context was cancelled) is answered
// nothing by WriteError: nobody would read it. The error handler is still
// called, to log it.
//
// # After the status is sent
//
// A Handler does not buffer the response: the handler's writes go to the
// client as it makes them, and a handler can stream and flush. The price
// is that once the handler has sent its status, the Handler can no
// longer answer with an error. http.TimeoutHandler makes the other
// choice: it buffers the whole response, so that it can always answer
// 503 instead, at the cost of memory for every response in flight, no
// streaming, no Flush, and a client that gets its first byte only once
// the handler is done. Those costs fall on every request, to serve the
// requests that time out; a Handler does not pay them. To get
// TimeoutHandler's behaviour for some routes, wrap them in it.
//
// So, when the stack fails a request whose handler has sent its status:
//
//   - if the handler has returned (a Timeout in Cooperative mode, the
//     default, waits for it), its response is complete and stands: the
//     client has it, whatever the Timeout says about its lateness;
//   - if the handler is still running (a Timeout in Abandon mode answered
//     without it), the client has part of a response: the Handler aborts
//     it with http.ErrAbortHandler, so that the client sees a broken
//     response and not a short one that looks complete.
//
// Once the Handler has the stack's answer, a handler still running (in
// Abandon mode) writes nowhere: its writes fail with
// http.ErrHandlerTimeout, as under http.TimeoutHandler, as do the
// deadlines and the full duplex of http.ResponseController, and w.Header
// gives it a map that goes nowhere. It must not read the request's body
// any more, nor touch a header map it got before, where the Handler may be
// writing its own answer: Abandon mode is for handlers that ignore their
// context, and is best kept for those.
//
// # Panics and clients that go away
//
// A panic in the handler goes up through the stack, whose layers give
// back what they hold on the way (a ConcurrencyLimit's permit), and on up
// to net/http, which logs it unless it is http.ErrAbortHandler and closes
// the connection.
//
// A layer that runs the handler on a goroutine of its own (a Timeout in
// Abandon mode) cannot let a panic there go up: it would end the program.
// It returns it as a *tower.PanicError instead, and the Handler does what
// net/http does: it logs it through the server's ErrorLog (or the log
// package's logger), "http: panic serving <address>: <value>" and the
// panic's stack, unless the value is http.ErrAbortHandler, and aborts the
// response with http.ErrAbortHandler, which closes the connection. A
// panic that broke the whole stack (one in an inner service's Ready, on a
// Buffer's worker, say) fails every request the same way: the Handler
// answers them 503, as for any stack that is not ready, and logs the panic
// once, the first time it meets it.
//
// A client that goes away ends the request's context. Waiting in Ready,
// the request gives up and holds nothing; in the handler, the handler
// sees its context end, and whatever the stack holds for the request is
// given back when it returns. A handler that ignores its context keeps its
// permit until it returns, as it keeps its goroutine.
//
// Malformed requests never reach a Handler: net/http answers them 400
// itself.
//
// # The client side
//
// A client stack's request is the *http.Request and its response the
// *http.Response. The leaf sends the request with the base RoundTripper.
// A [Transport] builds a stack for each host the first time it sends a
// request there, every spelling of a host sharing one (case, a trailing
// dot, the default port), and keeps at most [WithMaxHosts] of them; a
// [BalancedTransport] sends each request through one stack to a
// balancer over endpoints ([NewEndpoint]), each a stack of its own in
// front of one backend.
//
// Retries. [NewRetryPolicy] is a ready-made retry policy for HTTP: it
// retries idempotent requests ([Idempotent]) on errors and on 429, 502,
// 503 and 504, other requests only when the server cannot have acted on
// them (a dial error, a refusal of the stack below the Retry, a 429),
// honours Retry-After up to a cap, sends bodies again and closes the
// responses it retries. [Failure] and [Accepted] classify results for a
// circuit breaker or outlier detection, and for a client-side throttle.
//
// Bodies. Retrying or hedging a request sends it more than once, so its
// body must be readable more than once. A retry.Policy or hedge.Policy for
// HTTP calls [CloneRequest] in its Clone, as [RetryPolicy] does: a request whose body has GetBody
// (those of http.NewRequest over a bytes.Buffer, bytes.Reader or
// strings.Reader) gets a copy whose body GetBody makes, when it is first
// read; a request whose body cannot be made again is sent once. The
// example of [NewTransport] has such a policy. The request's body is
// closed even when no attempt sends it (a request shed), as a
// RoundTripper must.
//
// Responses. Every response the leaf gets is recorded, and when the
// stack answers, every one the caller does not get is discarded: the
// responses of attempts that were retried, of hedges that lost, and those
// a layer replaced with an error. Discarding drains a body that says it
// is no longer than 4 KiB, so that its connection is used again, and
// closes it; a longer body, or one of unknown length, is closed unread,
// which closes its connection, rather than keep the caller waiting for a
// body nobody wants. A response that arrives after the stack answered (an
// attempt a Timeout in Abandon mode gave up on) is discarded when it
// arrives. A layer that returns a response it built itself, rather than
// one the leaf got, leaves the transport unable to tell which body the
// caller reads; none is then discarded.
//
// Contexts. A layer that derives a context for its call (a Timeout, a
// Hedge) ends it when its call returns, which is when the response's
// headers are in; the body is read after that. So the leaf sends such a
// request under a context of its own that follows the call's context
// until the headers are in, and then the request's own context until the
// body is closed: a Timeout in a transport stack times the round trip up
// to the response's headers, as tower's does; to bound the whole
// exchange, body included, give the request's context a deadline (or
// set http.Client.Timeout). That context costs allocations and time per
// request, and so does the Timeout's own context and timer, which the base
// transport asks for; a stack without such a layer sends the request as it
// is.
//
// Permits. A permit is held until the stack's call returns: until the
// response's headers are in, as tower's ConcurrencyLimit holds its permit
// until the response future completes. Reading the body does not hold it,
// since the call has returned by then; bound the connections a client
// opens with the base transport (http.Transport.MaxConnsPerHost). For
// load balancing, an endpoint counts a request as pending until its body
// is closed or read to the end ([BodyCompletion]), so that a backend slow
// to send its bodies is seen as loaded.
//
// # Cost
//
// A Handler adds one allocation per request to a handler that answers at
// once, and a Timeout in its stack adds the copy of the request that
// carries the Timeout's context to the handler (r.WithContext). A request
// with a body whose reads the Handler watches (a limit, a deadline) goes
// to the handler on such a copy in any case, so that net/http's own
// request keeps its body: with WithMaxBodyBytes and no layer that derives
// a context, that copy is the price. A Transport with no layer that
// derives a context adds one allocation to a base that answers at once.
// BenchmarkServer, BenchmarkServerBody and BenchmarkTransport measure
// these; the figures are in bench/README.md.
package towerhttp
