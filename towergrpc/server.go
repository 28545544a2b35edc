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
// of a server through stack: a [UnaryServerStack], a tower.Builder or
// tower.Stack of several layers, the first one outermost (it sees the
// call first), or a single layer. The stack is built once, so its state
// (a concurrency limit, a rate window) is shared by all the server's unary
// RPCs, whatever their method.
//
// Each RPC first waits for the stack to be ready, with the RPC's context,
// and only then calls the handler, with the context the stack passes down.
// What the stack reserved is held until the handler returns. Errors become
// gRPC statuses as the package doc says. [WithServerMetrics] reports each
// RPC. It panics if stack or an option is nil, or if stack wraps the
// handler in a nil service.
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
// RPC of a server through stack, whose first layer is outermost (see
// [UnaryServerInterceptor]). The stack is built once and shared by all the
// server's streams.
//
// Each stream first waits for the stack to be ready, with the stream's
// context, before its handler starts and before any message is read. The
// handler runs for the stream's whole life, so what the stack reserved is
// held until the stream ends: a concurrency limit of n admits n streams at
// once. The handler sees the context the stack passes down as its stream's
// Context: under a Timeout, a handler that watches it ends the stream at
// the deadline, and the client gets codes.DeadlineExceeded.
// [WithServerMetrics] reports each stream once it has ended. It panics if
// stack or an option is nil, or if stack wraps the handler in a nil
// service.
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
