package towergrpc

import "github.com/towergo/tower/stack"

// UnaryServerStack returns an empty stack.Builder typed for
// [UnaryServerInterceptor], so that a server's stack needs no type
// argument (see the package example). A stack with a Buffer is closed by
// the Builder's Close (see package stack).
func UnaryServerStack() stack.Builder[UnaryServerCall, any] {
	return stack.New[UnaryServerCall, any]()
}

// StreamServerStack returns an empty stack.Builder typed for
// [StreamServerInterceptor]. What its layers reserve is held for the
// stream's life, so a ConcurrencyLimit limits open streams; give it and a
// unary stack one limit.Semaphore, with SharedConcurrencyLimit, to put
// calls and streams under one limit.
func StreamServerStack() stack.Builder[StreamServerCall, struct{}] {
	return stack.New[StreamServerCall, struct{}]()
}

// UnaryClientStack returns an empty stack.Builder typed for
// [UnaryClientInterceptor].
func UnaryClientStack() stack.Builder[UnaryClientCall, struct{}] {
	return stack.New[UnaryClientCall, struct{}]()
}

// StreamClientStack returns an empty stack.Builder typed for
// [StreamClientInterceptor]. A stream stack cannot retry or hedge: the
// stream is the caller's once it is open.
func StreamClientStack() stack.Builder[StreamClientCall, struct{}] {
	return stack.New[StreamClientCall, struct{}]()
}
