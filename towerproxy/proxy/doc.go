// Package proxy is towerproxy, the HTTP reverse proxy of tower for Go, as a
// library: the command towerproxy is this package behind flags, and a Go
// program can embed the same proxy.
//
// # Building one
//
// A [Config] says what the proxy does; [Load] reads one from a YAML file,
// [Parse] from bytes, strictly (an unknown field, a bad duration, a route
// to no upstream, a backend URL that does not parse is an error that
// names the file and the line), and [Quick] makes the quick start's: one
// route to one upstream of the backends given. Whatever a Config leaves
// out has its default, filled in by Load, Parse and Quick alike. [New]
// builds a [Proxy], an http.Handler; [NewServer] puts it on its listeners
// with the admin handler, drains it when its context ends, and closes it.
//
// # What a request goes through
//
// A request is matched against the routes in order, by host and path
// prefix; the first that matches takes it, and one that none matches is
// answered 404. Then, each layer able to refuse it at once:
//
//  1. the route's rate limit, if it has one: a token bucket per key (the
//     client's address or a header), local or shared by a fleet through
//     Redis; a refusal is 429 with the Retry-After of the key's next token;
//  2. the admission of the whole proxy: an adaptive concurrency limit
//     (Gradient2 by default) with 25ms of patience, which protects the
//     process itself and discounts its own scheduling delay; requests wait
//     in priority order (a route's, or a header's), and one that finds no
//     permit within the patience is shed, 503 with Retry-After: 1;
//  3. the upstream's own adaptive limit, the same way, which protects its
//     backends as a whole, and learns their latency without the proxy's;
//  4. the upstream's client stack: an overall timeout, retries within a
//     budget (idempotent requests, on errors and 502, 503 and 504, never
//     once a byte of the response has gone to the client, waiting as long
//     as a Retry-After asks), an optional hedge at a percentile of the
//     latency, and the balancer: power of two choices over each backend's
//     PeakEWMA, with outlier ejection of at most a share of the backends,
//     active health checks and a breaker per backend if configured, and a
//     timeout per try.
//
// The answers the proxy gives itself, when no backend's answer can be
// had: 413 for a body over the limit, 408 for a body sent too slowly, 400
// for a body that broke off, 504 when the upstream's time ran out, 503
// with Retry-After when no backend could take the request (all shed,
// ejected, down or behind an open breaker), and 502 for anything else. A
// gRPC call gets the same in gRPC's terms, as a Trailers-Only response
// (DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, INTERNAL, UNAVAILABLE), and is
// held to the deadline its client gave it in grpc-timeout.
//
// # HTTP
//
// Clients speak HTTP/1.1 or HTTP/2 (over TLS, or h2c if enabled), with
// HTTP/2's default frames of 16KiB at most, as nginx and HAProxy offer; an
// upstream is spoken to in HTTP/1.1 or h2c, which gRPC needs. HTTP/1.1 to
// a plain-TCP backend goes through the proxy's own client, which writes a
// request and reads its response on the request's goroutine over kept-alive
// connections; a request it does not take (TLS, an Upgrade, Expect,
// trailers, a body of unknown length or over 64KiB) goes through net/http's
// Transport, as h2c does. Hop-by-hop
// headers are removed, X-Forwarded-For, X-Forwarded-Proto and Forwarded
// are set (and trusted from the proxies listed only), Via is added,
// trailers are passed on, and streaming responses are flushed as they come.
// TRACE and CONNECT are answered 405 and never forwarded, and a request
// target with a fragment (#) 400, which net/http would pass on as a path
// with %23 in it. An HTTP/1.0 request, or a chunked HTTP/1.1 one, is the
// last on its connection: net/http's server hides the framing that RFC
// 9112 says to close after (a Content-Length beside Transfer-Encoding, an
// HTTP/1.0 request's Transfer-Encoding), so nothing smuggled after it is
// read.
// A request that asks to switch protocols (a WebSocket) becomes a tunnel
// once its backend answers 101: it counts in its route's rate limit but in
// no concurrency limit, since it lasts as long as the conversation.
// Headers, bodies, and the times to read them are bounded (see Server in
// Config).
//
// # Reload and drain
//
// [Proxy.Reload] puts a new Config in force without dropping or refusing
// a request: a request already sent on finishes with the upstream that
// sent it, one still waiting for a permit goes to the upstream in force
// when it gets one, and an upstream whose configuration did not change
// keeps its backends, its limits and what they learned. [Proxy.Close] lets the requests in
// flight finish, up to its context's end.
//
// # Observing it
//
// [Proxy.Registry] holds its Prometheus metrics (per route and upstream:
// requests by status class, errors by reason, latency; per backend:
// attempts, latency, state; each limit, in flight, shed, retries and the
// retry budget), which [Proxy.AdminHandler] serves at /metrics beside the
// state as JSON at /status and the live page at /live/. Each request has
// a JSON line in the access log that says where it went and why it was
// retried, shed or failed, and, with a tracing section, a span of
// OpenTelemetry whose context goes on to the backends in traceparent.
package proxy
