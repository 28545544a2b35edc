// Package towergrpc runs tower stacks in gRPC servers and clients. Most
// users start with [UnaryServerInterceptor] and a stack from
// [UnaryServerStack]; a server that sheds what it cannot take at once, and
// bounds each call:
//
//	protect := towergrpc.UnaryServerStack().
//		LoadShed().           // turn away what the limit cannot take now
//		Timeout(time.Second). // each handler for at most a second
//		ConcurrencyLimit(64)  // at most 64 in the handlers
//	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(
//		towergrpc.UnaryServerInterceptor(protect, towergrpc.WithServerMetrics(sink)),
//		// interceptors listed after it run only for admitted calls
//	))
//
// The 65th call in flight fails at once with codes.ResourceExhausted and
// "service overloaded", without reaching the handler; a handler that has
// not answered within a second fails with codes.DeadlineExceeded and
// "request timed out". The wait for the limit's permit happens in Ready,
// which no Timeout times, so the Timeout measures the handler alone.
//
// # Stacks
//
// Each interceptor takes one stack, a tower.Layer whose first layer is the
// outermost (a stack.Builder from [UnaryServerStack] and its siblings,
// tower.Stack, or a single layer); an empty stack only maps errors and
// reports RPCs. The request is a [UnaryServerCall], [StreamServerCall],
// [UnaryClientCall] or [StreamClientCall]. The stack is built once and
// shared by every RPC through the interceptor, whatever its method. Each
// RPC waits for the stack's Ready with its own context, then calls it;
// what Ready reserved is held until the handler, invoker or stream ends,
// so a concurrency limit in a stream stack limits open streams. To put
// unary calls and streams under one limit, give both stacks one
// limit.Semaphore (limit.NewSharedConcurrencyLayer).
//
// Put the interceptor first in the chain, so that a shed call costs no
// other interceptor's work. A unary interceptor runs once grpc has decoded
// the request; a stream interceptor, before the first message is read. A
// panic on the RPC's goroutine goes on up once the layers have given back
// what they held; one that a layer recovered on a goroutine of its own (a
// Timeout in Abandon mode) comes back as a *tower.PanicError, with
// codes.Internal.
//
// # Errors and status codes
//
// The interceptors ask an error what it is, not who made it: tower's
// IsOverloaded, IsTimeout, IsUnavailable and IsThrottled take the answer
// of the first error in its chain with a method Overloaded() bool, and so
// on, so a user's own middleware maps as this module's does. The first
// rule that matches wins; the message is the error's:
//
//	the caller's context ended during Ready     Canceled or DeadlineExceeded
//	a gRPC status error from Ready, not a panic  unchanged
//	any other error from Ready                   Unavailable
//	a *tower.PanicError, unless an error that    Internal
//	  answers Unavailable wraps it
//	a gRPC status error, or one wrapping one     unchanged
//	Overloaded() (loadshed.ErrOverloaded)        ResourceExhausted
//	Timeout() for a layer's deadline, not        DeadlineExceeded
//	  wrapping context.DeadlineExceeded
//	Unavailable() (buffer.ErrClosed)             Unavailable
//	Throttled()                                  ResourceExhausted
//	Timeout() for a context's deadline           DeadlineExceeded
//	context.Canceled                             Canceled
//	any other error                              unchanged (a server sends Unknown)
//
// A mapped error keeps the one it came from, for errors.Is and tower's
// Is functions. Clients do not usually retry ResourceExhausted, so retries
// do not undo shedding; a shed call never reached the handler, so it is
// safe to retry with a pushback ([NewRetryPolicy]). An error from Ready
// means the stack is broken for good, and Unavailable asks the client to
// back off or go elsewhere.
//
// # Retries, pushback and metrics
//
// A server interceptor sends a pushback trailer ([PushbackKey]) with each
// call the stack refuses ([WithPushback]); [NewRetryPolicy] is a client's
// retry policy that honours it; [Failure] and [Accepted] classify results
// for a circuit breaker or a client-side throttle. [WithServerMetrics] and
// [WithClientMetrics] report each RPC once it has ended to a
// metrics.RequestSink (towerotel has one for OpenTelemetry).
package towergrpc
