// Package towergrpc runs tower stacks in gRPC servers and clients: it turns
// a stack into a unary or a stream interceptor, for the server side or the
// client side, turns the stack's errors into gRPC statuses, and reports
// each RPC to a metrics.RequestSink if asked to.
//
// A server that sheds what it cannot take at once, and bounds each call:
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
// "service overloaded", without reaching the handler; a call whose handler
// has not answered within a second fails with codes.DeadlineExceeded and
// "request timed out". The Timeout sits above the limit: the wait for the
// limit's permit happens in Ready, which no Timeout times, so it measures
// the handler alone wherever it sits, and above the limit a call that a
// Timeout in Abandon mode gives up on keeps its permit until its handler
// returns, so that the limit counts the handlers that really run.
//
// # The stack and the options
//
// Each interceptor takes one stack, a tower.Layer, then options, as
// towerhttp's NewHandler and NewTransport do. The stack is a
// stack.Builder, best made with [UnaryServerStack], [StreamServerStack],
// [UnaryClientStack] or [StreamClientStack], which need no type argument;
// or a tower.Builder, or tower.Stack of several layers; or a single layer.
// In each, the first layer is the outermost: it sees the call first. An
// empty Builder is a stack of no layers, for an interceptor that only maps
// errors or reports RPCs. The server interceptors take [ServerOption]s,
// the client ones [ClientOption]s.
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
// # A limit with no number to tune
//
// A concurrency limit needs the number of RPCs the handlers can take at
// once, which nobody knows for sure and which changes with every deploy.
// Package adaptive's limit finds it from the latency and drops of the RPCs
// it lets in; under a LoadShed, what it cannot take is answered
// ResourceExhausted at once:
//
//	protect := towergrpc.UnaryServerStack().LoadShed().AdaptiveLimit(adaptive.Gradient2())
//	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(towergrpc.UnaryServerInterceptor(protect,
//		towergrpc.WithPriority(towergrpc.PriorityMetadata("x-priority")))))
//
// [WithPriority] gives each RPC a [tower.Priority] before the stack sees
// it; near its limit, the adaptive limit sheds low priority first and
// still admits critical RPCs. Read the priority from metadata only where
// the metadata comes from a party you trust.
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
// it would without this package (grpc does not recover it); request
// metrics report the RPC on its way. One that a layer recovered on a
// goroutine of its own (a Timeout in Abandon mode) comes back as a
// *tower.PanicError, which errors.As reaches through the status, and
// which the RPC fails with as codes.Internal.
//
// # Errors and status codes
//
// The interceptors ask an error what it is, not who made it: package
// tower's IsOverloaded, IsTimeout, IsUnavailable and IsThrottled look down
// its chain for the first error with a method Overloaded() bool,
// Timeout() bool, Unavailable() bool or Throttled() bool, and take its
// answer. So an error of one's own middleware that has the method is
// answered as this module's are (see Example (Overloaded)), and this
// package needs no import of the middleware whose errors it maps. The
// interceptors return these errors, in this order of precedence:
//
//	error                                  code                 message
//	the caller's context ended             Canceled or          the context's error
//	  while the stack waited in Ready        DeadlineExceeded
//	another error from Ready               Unavailable          the error's
//	a *tower.PanicError: a panic that a    Internal             the error's
//	  layer recovered on a goroutine of
//	  its own, whatever its value, unless
//	  an error that answers Unavailable()
//	  wraps it (a Buffer the panic broke)
//	a gRPC status error, or one that       unchanged            unchanged
//	  wraps one
//	Overloaded() answers true              ResourceExhausted    the error's
//	  (loadshed.ErrOverloaded)                                    ("service overloaded")
//	Timeout() answers true, for a layer's  DeadlineExceeded     the error's
//	  deadline: an error that wraps no                            ("request timed out")
//	  context.DeadlineExceeded
//	  (timeout.ErrElapsed)
//	Unavailable() answers true             Unavailable          the error's
//	  (buffer.ErrClosed,
//	  *buffer.ServiceError,
//	  balance.ErrNoEndpoints,
//	  balance.ErrClosed)
//	Throttled() answers true (none of      ResourceExhausted    the error's
//	  this module: a program's own quota)
//	Timeout() answers true, for a          DeadlineExceeded     the error's
//	  context's deadline
//	context.Canceled from the call         Canceled             the error's
//	any other error                        the error unchanged
//
// A layer's timeout comes before Unavailable, so that a call a Timeout cut
// short fails with DeadlineExceeded even when the error of a layer above
// wraps the Timeout's; a context's deadline wrapped in an error that says
// the service is unavailable is the service's failure. An error whose
// method answers false is not of that kind, whatever it wraps.
//
// Each mapped error keeps the error it came from: status.Code finds the
// code, and errors.Is(err, loadshed.ErrOverloaded) and
// tower.IsOverloaded(err) still hold, in an outer interceptor or, for a
// client interceptor, at the call site. An error the table does not know
// is returned as the handler or invoker returned it, which is what grpc
// does without this package: a server sends it as codes.Unknown with its
// message, and a client's caller gets it as it is.
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
// answers HTTP.) A throttled caller is refused for its own rate, and
// RESOURCE_EXHAUSTED is also grpc's code for "some resource has been
// exhausted, perhaps a per-user quota". ErrElapsed is the server's
// deadline for the call, so it is DEADLINE_EXCEEDED, as the client's own
// deadline would be.
//
// # Retries and pushback
//
// A server interceptor sends a pushback, the trailer [PushbackKey] of
// gRPC's retry design (proposal A6), with each call it sheds or refuses
// because its stack takes none: [DefaultPushback], one second, unless
// [WithPushback] or [WithNoRetry] says otherwise. A client that follows
// A6 waits that long before it retries, and retries RESOURCE_EXHAUSTED
// only when it carries a pushback.
//
// [NewRetryPolicy] is such a client's policy, for a unary client stack:
// it retries calls refused by the stack below the Retry, calls that never
// left (UNAVAILABLE before grpc opened a stream), RESOURCE_EXHAUSTED and
// UNAVAILABLE with a pushback, waited for up to a cap, and UNAVAILABLE
// for the methods said idempotent ([RetryPolicy.WithIdempotent]).
// [Failure] and [Accepted] classify results for a circuit breaker or
// outlier detection, and for a client-side throttle.
//
// # Request metrics
//
// [WithServerMetrics] and [WithClientMetrics] report each RPC, once it has
// ended, to a metrics.RequestSink: its full method name, the gRPC code it
// ended with, its outcome (served, shed, timed out, canceled, failed) and
// its latency, readiness included; a stream's is its whole life. Module
// github.com/towergo/tower/towerotel has a sink for OpenTelemetry, and
// metrics.Counts keeps the outcomes in memory.
//
// # Cost
//
// A unary interceptor allocates nothing of its own, when the call succeeds
// and when it is shed. A server stream costs one small allocation more,
// the stream that reports the stack's context. A client stream costs a
// goroutine, three channels and a wrapper for the stream's life. Request
// metrics allocate nothing: an RPC costs two readings of the clock and the
// sink's call more, and an interceptor made without them is the one it
// was before. The benchmarks call the interceptors directly; the figures
// are in bench/README.md.
package towergrpc
