package towergrpc

import (
	"context"

	"google.golang.org/grpc"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towergrpc/internal/mono"
)

// UnaryClientInterceptor returns an interceptor that runs every unary RPC
// a client makes through stack, whose first layer is the outermost. The
// stack is built once and shared by all the RPCs made through the
// interceptor: installed on a connection, a concurrency limit bounds that
// connection's RPCs in flight.
//
// Each RPC waits for the stack's Ready with the caller's context, then
// calls the invoker with the context the stack passes down; what Ready
// reserved is held until the invoker returns. A call the stack refuses
// never reaches the network, and fails with the status the package doc
// gives. It panics if stack or an option is nil, or if stack wraps the
// invoker in a nil service.
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
// fails with, and the stack's own error it was mapped from.
func invoke(ctx context.Context, svc tower.Service[UnaryClientCall, struct{}], call UnaryClientCall) (err, stackErr error) {
	p, err := svc.Ready(ctx)
	if err != nil {
		return readyError(ctx, err), err
	}
	_, err = p.Call(ctx, call)
	return callError(err), err
}

// StreamClientInterceptor returns an interceptor that runs the opening of
// every stream a client makes through stack, whose first layer is the
// outermost, built once and shared by all the streams.
//
// Each stream waits for the stack's Ready with the caller's context, then
// is opened with the context the stack passes down. What Ready reserved is
// held for the stream's whole life, so a concurrency limit of n allows n
// open streams. The stack's call runs on a goroutine of its own until the
// stream ends as grpc ends it: RecvMsg returned an error (io.EOF
// included) or the one response of a stream the server does not stream;
// SendMsg or Header returned an error other than io.EOF; or the context
// ended. A stream left without any of these leaks, in grpc as here. When
// that final call returns, the stack's call has returned too, so the
// reservation is free for the next stream. A Timeout in the stack bounds
// the stream's whole life, as a deadline on ctx would.
//
// The stack must call the step below it at most once per stream: a retry
// or a hedge cannot open the stream again, and a second attempt fails with
// codes.Internal. A panic in the stack's call (a layer, the streamer or a
// later interceptor) does not end the program: before the stream is handed
// over, the caller gets a *tower.PanicError with codes.Internal; after, it
// is logged through log/slog. It panics if stack or an option is nil, or
// if stack wraps the streamer in a nil service.
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
