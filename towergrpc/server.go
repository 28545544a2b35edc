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
// of a server through stack, whose first layer is the outermost. The stack
// is built once, so its state (a concurrency limit, a rate window) is
// shared by all the server's unary RPCs, whatever their method.
//
// Each RPC waits for the stack's Ready with the RPC's context, then calls
// the handler with the context the stack passes down. What Ready reserved
// is held until the handler returns. Errors become gRPC statuses as the
// package doc says. It panics if stack or an option is nil, or if stack
// wraps the handler in a nil service.
func UnaryServerInterceptor(stack tower.Layer[UnaryServerCall, any], opts ...ServerOption) grpc.UnaryServerInterceptor {
	const fn = "towergrpc.UnaryServerInterceptor"
	svc, o := build(fn, serveUnary, stack, opts)
	if o.requests == nil {
		return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			res, err, _ := unaryRPC(o.prioritize(ctx, info.FullMethod), svc, req, info, handler, o.pushback)
			return res, err
		}
	}
	sink := o.requests
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (res any, err error) {
		ob := observation{start: mono.Now()}
		defer ob.report(sink, metrics.GRPCServer, info.FullMethod)
		res, err, ob.stackErr = unaryRPC(o.prioritize(ctx, info.FullMethod), svc, req, info, handler, o.pushback)
		ob.err, ob.ended = err, true
		return res, err
	}
}

// unaryRPC runs one unary RPC through svc. It returns the response, the
// error the RPC fails with, and the stack's own error, from which that one
// was mapped.
func unaryRPC(ctx context.Context, svc tower.Service[UnaryServerCall, any], req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler, pushback metadata.MD) (res any, err, stackErr error) {
	p, err := svc.Ready(ctx)
	if err != nil {
		if pushback != nil && err != ctx.Err() {
			setPushback(grpc.ServerTransportStreamFromContext(ctx), pushback, err)
		}
		return nil, readyError(ctx, err), err
	}
	res, err = p.Call(ctx, UnaryServerCall{Method: info.FullMethod, Info: info, Req: req, handler: handler})
	if pushback != nil && err != nil && shed(err) {
		setPushback(grpc.ServerTransportStreamFromContext(ctx), pushback, err)
	}
	return res, callError(err), err
}

// StreamServerInterceptor returns an interceptor that runs every streaming
// RPC of a server through stack, whose first layer is the outermost,
// built once and shared by all the server's streams.
//
// Each stream waits for the stack's Ready before its handler starts and
// any message is read. The handler runs for the stream's whole life, so
// what Ready reserved is held until the stream ends: a concurrency limit of
// n admits n streams at once. The handler's stream reports the context the
// stack passes down as its Context: under a Timeout, a handler that
// watches it ends the stream at the deadline, with codes.DeadlineExceeded;
// one blocked in RecvMsg does not see it until a message comes or the
// client goes away. A Timeout in Abandon mode does not suit a stream
// stack: grpc would end the stream while the handler still uses it. It
// panics if stack or an option is nil, or if stack wraps the handler in a
// nil service.
func StreamServerInterceptor(stack tower.Layer[StreamServerCall, struct{}], opts ...ServerOption) grpc.StreamServerInterceptor {
	const fn = "towergrpc.StreamServerInterceptor"
	svc, o := build(fn, serveStream, stack, opts)
	if o.requests == nil {
		return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			err, _ := streamRPC(o.prioritize(ss.Context(), info.FullMethod), svc, srv, ss, info, handler, o.pushback)
			return err
		}
	}
	sink := o.requests
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		ob := observation{start: mono.Now()}
		defer ob.report(sink, metrics.GRPCServer, info.FullMethod)
		err, ob.stackErr = streamRPC(o.prioritize(ss.Context(), info.FullMethod), svc, srv, ss, info, handler, o.pushback)
		ob.err, ob.ended = err, true
		return err
	}
}

// streamRPC runs one server stream through svc, under ctx, the stream's
// context with its priority. It returns the error the stream fails with,
// and the stack's own error, from which that one was mapped.
func streamRPC(ctx context.Context, svc tower.Service[StreamServerCall, struct{}], srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler, pushback metadata.MD) (err, stackErr error) {
	p, err := svc.Ready(ctx)
	if err != nil {
		if pushback != nil && err != ctx.Err() {
			setPushback(grpc.ServerTransportStreamFromContext(ctx), pushback, err)
		}
		return readyError(ctx, err), err
	}
	_, err = p.Call(ctx, StreamServerCall{Method: info.FullMethod, Info: info, Srv: srv, Stream: ss, handler: handler})
	if pushback != nil && err != nil && shed(err) {
		setPushback(grpc.ServerTransportStreamFromContext(ctx), pushback, err)
	}
	return callError(err), err
}
