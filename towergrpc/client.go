package towergrpc

import (
	"context"

	"google.golang.org/grpc"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towergrpc/internal/mono"
)

// UnaryClientInterceptor returns an interceptor that runs every unary RPC
// a client makes through stack: a [UnaryClientStack], a tower.Builder or
// tower.Stack of several layers, the first one outermost (it sees the
// call first), or a single layer. The stack is built once, so its state
// is shared by all the RPCs made through the interceptor: install it on a
// connection, and a concurrency limit bounds that connection's RPCs in
// flight.
//
// Each RPC first waits for the stack to be ready, with the caller's
// context, and only then calls the invoker, with the context the stack
// passes down. What the stack reserved is held until the invoker returns.
// A request the stack refuses, a shed one for instance, never reaches the
// network, and fails with the status the package doc gives.
// [WithClientMetrics] reports each RPC. It panics if stack or an option
// is nil, or if stack wraps the invoker in a nil service.
func UnaryClientInterceptor(stack tower.Layer[UnaryClientCall, struct{}], opts ...ClientOption) grpc.UnaryClientInterceptor {
	const fn = "towergrpc.UnaryClientInterceptor"
	svc, o := build(fn, invokeUnary, stack, opts)
	if o.requests == nil {
		return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			err, _ := invoke(ctx, svc, UnaryClientCall{Method: method, Req: req, Reply: reply, Conn: cc, Opts: opts, invoker: invoker, trailers: new(trailerSlot)})
			return err
		}
	}
	sink := o.requests
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) (err error) {
		ob := observation{start: mono.Now()}
		defer ob.report(sink, metrics.GRPCClient, method)
		err, ob.stackErr = invoke(ctx, svc, UnaryClientCall{Method: method, Req: req, Reply: reply, Conn: cc, Opts: opts, invoker: invoker, trailers: new(trailerSlot)})
		ob.err, ob.ended = err, true
		return err
	}
}

// invoke makes one unary RPC through svc. It returns the error the RPC
// fails with, and the stack's own error, from which that one was mapped.
func invoke(ctx context.Context, svc tower.Service[UnaryClientCall, struct{}], call UnaryClientCall) (err, stackErr error) {
	p, err := svc.Ready(ctx)
	if err != nil {
		return readyError(ctx, err), err
	}
	_, err = p.Call(ctx, call)
	return callError(err), err
}

// StreamClientInterceptor returns an interceptor that runs the opening of
// every stream a client makes through stack, whose first layer is
// outermost (see [UnaryClientInterceptor]), built once and shared by all
// the streams.
//
// Each stream first waits for the stack to be ready, with the caller's
// context, and only then is opened, with the context the stack passes
// down. What the stack reserved is held for the stream's whole life, so a
// concurrency limit of n allows n open streams. The stack's call runs on a
// goroutine of its own, which returns once the stream has ended: when
// RecvMsg has returned an error (io.EOF included), or the response of a
// stream that the server does not stream; when SendMsg or Header has
// returned an error other than io.EOF; or when the context ends. These are
// the ways grpc itself has of ending a stream, and a stream left without
// any of them leaks in grpc as well as here. Once the stream's final
// RecvMsg, SendMsg or Header has returned, the stack's call has returned
// too, so the stream's reservation is free for the caller's next stream,
// and [WithClientMetrics] has reported the stream. A Timeout in the stack
// bounds the stream's whole life, as a deadline on the caller's context
// would, and the stream then fails as grpc fails it, with
// codes.DeadlineExceeded and grpc's message.
//
// The stack must call the step below it at most once per stream: a retry
// or a hedge cannot open a stream again, because the first one was already
// handed to the caller, and a second attempt fails with codes.Internal.
//
// A panic in the stack's call, which runs on the interceptor's goroutine
// (in a layer, in the streamer or an interceptor after this one), does not
// end the program: before the stream is handed to the caller, the caller
// gets it as a *tower.PanicError with codes.Internal; after, it is logged
// through log/slog, since no caller is left to hear of it. It panics if
// stack or an option is nil, or if stack wraps the streamer in a nil
// service.
func StreamClientInterceptor(stack tower.Layer[StreamClientCall, struct{}], opts ...ClientOption) grpc.StreamClientInterceptor {
	const fn = "towergrpc.StreamClientInterceptor"
	svc, o := build(fn, openStream, stack, opts)
	if o.requests == nil {
		return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			cs, err, _ := startStream(ctx, svc, StreamClientCall{Method: method, Desc: desc, Conn: cc, Opts: opts, streamer: streamer}, nil, 0)
			return cs, err
		}
	}
	sink := o.requests
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (cs grpc.ClientStream, err error) {
		ob := observation{start: mono.Now()}
		defer func() {
			if cs == nil { // a stream handed to the caller is reported when it ends
				ob.report(sink, metrics.GRPCClient, method)
			}
		}()
		cs, err, ob.stackErr = startStream(ctx, svc, StreamClientCall{Method: method, Desc: desc, Conn: cc, Opts: opts, streamer: streamer}, sink, ob.start)
		ob.err, ob.ended = err, true
		return cs, err
	}
}
