package towerhttp

import (
	"net/http"

	"github.com/towergo/tower/stack"
)

// ServerStack returns an empty stack.Builder for [NewHandler]'s layers, so
// that a server's stack is declared without type arguments:
//
//	protect := towerhttp.ServerStack().
//		LoadShed().           // turn away what the limit cannot take now
//		Timeout(time.Second). // each handler for at most a second
//		ConcurrencyLimit(64)  // at most 64 in the handler
//	srv := &http.Server{Addr: ":8080", Handler: towerhttp.NewHandler(mux, protect)}
//
// A stack with a Buffer is closed by the Builder's Close.
func ServerStack() stack.Builder[*http.Request, Response] {
	return stack.New[*http.Request, Response]()
}

// ClientStack returns an empty stack.Builder for the layers of
// [NewTransport], [NewBalancedTransport] and [NewEndpoint]. For retries,
// give RetryPolicy the ready-made [RetryPolicy]:
//
//	client := &http.Client{Transport: towerhttp.NewTransport(http.DefaultTransport,
//		towerhttp.ClientStack().RetryPolicy(towerhttp.NewRetryPolicy(
//			retry.WithBackoff(retry.NewFullJitterBackoff(50*time.Millisecond, time.Second)))))}
//
// The Builder's Retry, with a classifier of one's own, sends the request
// as it is, which suits only requests without a body. A retry or hedge
// policy of one's own calls [CloneRequest] in its Clone.
func ClientStack() stack.Builder[*http.Request, *http.Response] {
	return stack.New[*http.Request, *http.Response]()
}
