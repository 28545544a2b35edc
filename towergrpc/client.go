package towergrpc

import (
	"context"

	"google.golang.org/grpc"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towergrpc/internal/mono"
)

// UnaryClientInterceptor returns an interceptor that runs every unary RPC
// a client makes through stack: installed on a connection, a concurrency
// limit bounds that connection's RPCs in flight. A call the stack refuses
// never reaches the network. It panics if stack or an option is nil, or if
// stack wraps the invoker in a nil service.
func UnaryClientInterceptor(stack tower.Layer[UnaryClientCall, struct{}], opts ...ClientOption) grpc.UnaryClientInterceptor {
	svc, o := build("towergrpc.UnaryClientInterceptor", invokeUnary, stack, opts)
	if o.requests == nil {
		return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			_, err, _ := rpc(ctx, svc, UnaryClientCall{Method: method, Req: req, Reply: reply, Conn: cc, Opts: opts, invoker: invoker, trailers: new(trailerSlot)}, nil)
			return err
		}
	}
	sink := o.requests
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) (err error) {
		ob := observation{start: mono.Now()}
		defer ob.report(sink, metrics.GRPCClient, method)
		_, err, ob.stackErr = rpc(ctx, svc, UnaryClientCall{Method: method, Req: req, Reply: reply, Conn: cc, Opts: opts, invoker: invoker, trailers: new(trailerSlot)}, nil)
		ob.err, ob.ended = err, true
		return err
	}
}

// StreamClientInterceptor returns an interceptor that runs the opening of
// every stream a client makes through stack. The stack's call runs on a
// goroutine of its own, and a Timeout in it bounds the stream's life as a
// deadline on ctx would, until the stream ends as grpc ends it: RecvMsg
// returned an error (io.EOF included) or the one response of a stream the
// server does not stream; SendMsg or Header returned an error other than
// io.EOF; or the context ended. A stream left without any of these leaks,
// in grpc as here. When that final call returns, the stack's call has
// returned too.
//
// The stack must call the step below it at most once per stream: a retry
// or a hedge cannot open the stream again, and a second attempt fails with
// codes.Internal. A panic in the stack's call does not end the program:
// before the stream is handed over, the caller gets a *tower.PanicError
// with codes.Internal; after, it is logged through log/slog. It panics if
// stack or an option is nil, or if stack wraps the streamer in a nil
// service.
func StreamClientInterceptor(stack tower.Layer[StreamClientCall, struct{}], opts ...ClientOption) grpc.StreamClientInterceptor {
	svc, o := build("towergrpc.StreamClientInterceptor", openStream, stack, opts)
	sink := o.requests
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (cs grpc.ClientStream, err error) {
		var ob observation
		if sink != nil {
			ob.start = mono.Now()
			defer func() {
				if cs == nil { // a stream handed to the caller is reported when it ends
					ob.report(sink, metrics.GRPCClient, method)
				}
			}()
		}
		cs, err, ob.stackErr = startStream(ctx, svc, StreamClientCall{Method: method, Desc: desc, Conn: cc, Opts: opts, streamer: streamer}, sink, ob.start)
		ob.err, ob.ended = err, true
		return cs, err
	}
}
