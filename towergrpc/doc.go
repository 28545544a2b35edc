// Package towergrpc runs tower stacks in gRPC servers and clients: it turns
// a list of layers into a unary or a stream interceptor, for the server
// side or the client side, and turns the stack's errors into gRPC statuses.
//
// A server that sheds what it cannot take at once, and bounds each call:
//
//	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(
//		towergrpc.UnaryServerInterceptor(
//			loadshed.NewLayer[towergrpc.UnaryServerCall, any](),
//			timeout.NewLayer[towergrpc.UnaryServerCall, any](time.Second),
//			limit.NewConcurrencyLayer[towergrpc.UnaryServerCall, any](64),
//		),
//		// interceptors listed after it run only for admitted calls
//	))
//
// The 65th call in flight fails at once with codes.ResourceExhausted and
// "service overloaded", without reaching the handler; a call whose handler
// has not answered within a second fails with codes.DeadlineExceeded and
// "request timed out". The Timeout sits above the limit: the wait for the
// limit's permit happens in Ready, which no Timeout times, so it measures
// the handler alone wherever it sits, and above the limit a call that a
// Timeout in Abandon mode gives up on keeps its permit until its handler
// returns, so that the limit counts the handlers that really run.
//
// # What flows through the stack
//
// Each interceptor builds its stack once, around an innermost step that
// carries on with the RPC: it calls the handler (server side) or the
// invoker or streamer (client side) that grpc gave the interceptor. The
// request is a struct that describes the RPC, [UnaryServerCall],
// [StreamServerCall], [UnaryClientCall] or [StreamClientCall], with the
// method's name and the messages, so that a layer such as steer or filter
// can decide by method. The response is the response message for a unary
// server call, and nothing (struct{}) for the others, whose results grpc
// returns in other ways.
//
// For every RPC the interceptor first waits for the stack's readiness,
// with the RPC's context, and only then calls the stack; the innermost step
// runs with the context the stack passes down, which is a Timeout's
// context under a Timeout. What the stack reserved in Ready (a concurrency
// permit, a place in a rate window) is held until the handler or invoker
// returns. The stack is shared by every RPC through the interceptor,
// whatever its method. Install one interceptor per server or connection;
// to put unary calls and streams under one limit, give both stacks one
// limit.Semaphore with limit.NewSharedConcurrencyLayer.
//
// # Where it sits among interceptors
//
// grpc runs chained interceptors in the order given, the first outermost.
// Put this one first, so that a shed call costs no other interceptor's
// work. A unary interceptor runs once grpc has read and decoded the request
// message; a stream interceptor runs before the first message is read.
//
// # Streams
//
// A stream's handler, on the server, runs for the stream's whole life, and
// so does the stack's call: readiness is waited for before the handler
// starts, and what the stack reserved is held until the stream ends. A
// concurrency limit in a stream stack therefore limits concurrent streams.
// The handler's stream reports the stack's context as its Context, so
// under a Timeout a handler that watches it ends the stream at the
// deadline. A handler blocked in RecvMsg does not see the deadline until a
// message comes or the client goes away; to bound one, receive on a
// goroutine of the handler's own and watch the Context. (The Abandon mode
// of package timeout does not suit a stream stack: the interceptor would
// return, and grpc end the stream, while the handler still uses it.)
//
// On the client, [StreamClientInterceptor] holds what the stack reserved
// until the stream has ended as grpc defines it (see there), and runs the
// stack's call on a goroutine of its own for that time. A panic there does
// not end the program: the caller gets it as an error with
// codes.Internal, or, once the stream is the caller's, it is logged. A
// stream stack cannot retry or hedge: the stream was handed to the caller
// when it opened.
//
// # Panics
//
// A panic in a handler, an invoker or a layer on the RPC's own goroutine
// goes on up, once the stack's layers have given back what they held, as
// it would without this package (grpc does not recover it). One that a
// layer recovered on a goroutine of its own (a Timeout in Abandon mode)
// comes back as a *tower.PanicError, which errors.As reaches through the
// status, and which the RPC fails with as codes.Internal.
//
// # Errors and status codes
//
// The interceptors return these errors, in this order of precedence:
//
//	error                                  code                 message
//	the caller's context ended             Canceled or          the context's error
//	  while the stack waited in Ready        DeadlineExceeded
//	another error from Ready               Unavailable          the error's
//	a *tower.PanicError: a panic that a    Internal             the error's
//	  layer recovered on a goroutine of
//	  its own, whatever its value
//	a gRPC status error, or one that       unchanged            unchanged
//	  wraps one
//	loadshed.ErrOverloaded                 ResourceExhausted    "service overloaded"
//	timeout.ErrElapsed                     DeadlineExceeded     "request timed out"
//	buffer.ErrClosed, *buffer.ServiceError Unavailable          the error's
//	  (a Buffer a panic broke included)
//	context.DeadlineExceeded or Canceled   DeadlineExceeded or  the error's
//	  from the call                          Canceled
//	any other error                        the error unchanged
//
// Each mapped error keeps the tower error it came from: status.Code finds
// the code, and errors.Is(err, loadshed.ErrOverloaded) still holds, in an
// outer interceptor or, for a client interceptor, at the call site. An
// error the table does not know is returned as the handler or invoker
// returned it, which is what grpc does without this package: a server
// sends it as codes.Unknown with its message, and a client's caller gets
// it as it is.
//
// A shed request gets codes.ResourceExhausted, and a broken stack
// codes.Unavailable, because they ask different things of the client. A
// shed request found this server momentarily out of a resource, the permit
// of a concurrency limit; grpc's own table of status codes gives
// RESOURCE_EXHAUSTED for "server temporarily out of resources". It is not
// in the retryable codes clients usually configure for gRPC's retry
// policy, so it does not turn one call that an overloaded server refused
// into several that it must refuse again: shedding exists to remove load,
// and retries that come straight back would put it back. The request never
// reached the handler, so a client that wants to retry it can do so
// safely, by listing RESOURCE_EXHAUSTED in its policy, ideally with retry
// throttling. An error from Ready other than the caller's means, by the
// readiness contract, that the stack is broken for good, and a closed or
// failed Buffer is the same; a client should go elsewhere at once, which is
// what UNAVAILABLE ("most likely a transient condition, which can be
// corrected by retrying with a backoff") asks for, and the code clients
// retry and load balancers act on. (HTTP has one status for both, 503, and
// grpc's table maps 503 and 429 alike to UNAVAILABLE; package towerhttp
// answers HTTP.) ErrElapsed is the server's deadline for the call, so it
// is DEADLINE_EXCEEDED, as the client's own deadline would be.
//
// # Cost
//
// A unary interceptor allocates nothing of its own, when the call succeeds
// and when it is shed. A server stream costs one small allocation more,
// the stream that reports the stack's context. A client stream costs a
// goroutine, three channels and a wrapper for the stream's life. The
// benchmarks call the interceptors directly; the figures are in
// bench/README.md.
package towergrpc
