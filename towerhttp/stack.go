package towerhttp

import (
	"net/http"

	"github.com/towergo/tower/stack"
)

// ServerStack returns an empty stack.Builder for [NewHandler]'s layers, so
// that a server's stack is declared without type arguments. A stack with a
// Buffer is closed by the Builder's Close.
func ServerStack() stack.Builder[*http.Request, Response] {
	return stack.New[*http.Request, Response]()
}

// ClientStack returns an empty stack.Builder for the layers of
// [NewTransport], [NewBalancedTransport] and [NewEndpoint]. For retries,
// give its RetryPolicy a [RetryPolicy]: its Retry, with a classifier of
// one's own, sends the request as it is, which suits only requests without
// a body. A retry or hedge policy of one's own calls [CloneRequest] in its
// Clone.
func ClientStack() stack.Builder[*http.Request, *http.Response] {
	return stack.New[*http.Request, *http.Response]()
}
