package towergrpc

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towergrpc/internal/mono"
)

// UnaryServerInterceptor returns an interceptor that runs every unary RPC
// of a server through stack. It panics if stack or an option is nil, or if
// stack wraps the handler in a nil service.
func UnaryServerInterceptor(stack tower.Layer[UnaryServerCall, any], opts ...ServerOption) grpc.UnaryServerInterceptor {
	svc, o := build("towergrpc.UnaryServerInterceptor", serveUnary, stack, opts)
	if o.requests == nil {
		return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			res, err, _ := rpc(o.prioritize(ctx, info.FullMethod), svc, UnaryServerCall{Method: info.FullMethod, Info: info, Req: req, handler: handler}, o.pushback)
			return res, err
		}
	}
	sink := o.requests
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (res any, err error) {
		ob := observation{start: mono.Now()}
		defer ob.report(sink, metrics.GRPCServer, info.FullMethod)
		res, err, ob.stackErr = rpc(o.prioritize(ctx, info.FullMethod), svc, UnaryServerCall{Method: info.FullMethod, Info: info, Req: req, handler: handler}, o.pushback)
		ob.err, ob.ended = err, true
		return res, err
	}
}

// rpc runs call through svc under ctx, and sends pushback, unless nil,
// with a call the stack refuses. It returns the response, the error the
// RPC fails with, and the stack's own error, from which that one was
// mapped.
func rpc[Req, Res any](ctx context.Context, svc tower.Service[Req, Res], call Req, pushback metadata.MD) (res Res, err, stackErr error) {
	p, err := svc.Ready(ctx)
	if err != nil {
		if pushback != nil && err != ctx.Err() {
			setPushback(ctx, pushback, err)
		}
		return res, readyError(ctx, err), err
	}
	res, err = p.Call(ctx, call)
	if pushback != nil && err != nil && refused(err) && !panicked(err) {
		setPushback(ctx, pushback, err)
	}
	return res, callError(err), err
}

// StreamServerInterceptor returns an interceptor that runs every streaming
// RPC of a server through stack. The handler's stream reports the context
// the stack passes down as its Context: under a Timeout, a handler that
// watches it ends the stream at the deadline; one blocked in RecvMsg does
// not see it until a message comes or the client goes away. A Timeout in
// Abandon mode does not suit a stream stack: grpc would end the stream
// while the handler still uses it. It panics if stack or an option is nil,
// or if stack wraps the handler in a nil service.
func StreamServerInterceptor(stack tower.Layer[StreamServerCall, struct{}], opts ...ServerOption) grpc.StreamServerInterceptor {
	svc, o := build("towergrpc.StreamServerInterceptor", serveStream, stack, opts)
	if o.requests == nil {
		return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			_, err, _ := rpc(o.prioritize(ss.Context(), info.FullMethod), svc, StreamServerCall{Method: info.FullMethod, Info: info, Srv: srv, Stream: ss, handler: handler}, o.pushback)
			return err
		}
	}
	sink := o.requests
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		ob := observation{start: mono.Now()}
		defer ob.report(sink, metrics.GRPCServer, info.FullMethod)
		_, err, ob.stackErr = rpc(o.prioritize(ss.Context(), info.FullMethod), svc, StreamServerCall{Method: info.FullMethod, Info: info, Srv: srv, Stream: ss, handler: handler}, o.pushback)
		ob.err, ob.ended = err, true
		return err
	}
}
