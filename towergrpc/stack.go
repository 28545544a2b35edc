package towergrpc

import "github.com/towergo/tower/stack"

// UnaryServerStack returns an empty stack.Builder typed for
// [UnaryServerInterceptor], so that a server's stack needs no type
// argument. A stack with a Buffer is closed by the Builder's Close.
func UnaryServerStack() stack.Builder[UnaryServerCall, any] {
	return stack.New[UnaryServerCall, any]()
}

// StreamServerStack returns an empty stack.Builder typed for
// [StreamServerInterceptor].
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
