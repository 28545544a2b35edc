package towerhttp

import (
	"net/http"

	"github.com/towergo/tower/stack"
)

// ServerStack returns an empty stack.Builder for the server side: its
// layers take the *http.Request and return a Response, as the stack of
// [NewHandler] does, so that a server's protection is declared without a
// type argument:
//
//	protect := towerhttp.ServerStack().
//		LoadShed().           // turn away what the limit cannot take now
//		Timeout(time.Second). // each handler for at most a second
//		ConcurrencyLimit(64)  // at most 64 in the handler
//	srv := &http.Server{Addr: ":8080", Handler: towerhttp.NewHandler(mux, protect)}
//
// A stack with a Buffer is closed by the Builder's Close (see package
// stack).
func ServerStack() stack.Builder[*http.Request, Response] {
	return stack.New[*http.Request, Response]()
}

// ClientStack returns an empty stack.Builder for the client side: its
// layers take the *http.Request and return the *http.Response, as the
// stacks of [NewTransport], [NewBalancedTransport] and [NewEndpoint] do.
//
// A Retry sends a request again. Give RetryPolicy the ready-made
// [RetryPolicy], which knows HTTP: it retries idempotent requests on
// errors and on 429, 502, 503 and 504, other requests only when the
// server cannot have acted on them, honours Retry-After, sends bodies
// again through GetBody and closes the responses it retries:
//
//	client := &http.Client{Transport: towerhttp.NewTransport(http.DefaultTransport,
//		towerhttp.ClientStack().RetryPolicy(towerhttp.NewRetryPolicy(
//			retry.WithBackoff(retry.NewFullJitterBackoff(50*time.Millisecond, time.Second)))))}
//
// The Builder's Retry, with a classifier of one's own, sends the request
// as it is, which suits only requests without a body: a body that the
// first attempt read is gone, and the retry fails ("http:
// ContentLength=7 with Body length 0"). A policy of one's own for
// requests with a body calls [CloneRequest] in its Clone, as the example
// of NewTransport does; the same goes for a Hedge's policy.
func ClientStack() stack.Builder[*http.Request, *http.Response] {
	return stack.New[*http.Request, *http.Response]()
}
