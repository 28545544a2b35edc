package towergrpc

import (
	"context"

	"google.golang.org/grpc"

	"github.com/towergo/tower"
)

// UnaryServerInterceptor returns an interceptor that runs every unary RPC
// of a server through one stack made of layers, the first one outermost:
// it sees the call first. The stack is built once, so its state (a
// concurrency limit, a rate window) is shared by all the server's unary
// RPCs, whatever their method.
//
// Each RPC first waits for the stack to be ready, with the RPC's context,
// and only then calls the handler, with the context the stack passes down.
// What the stack reserved is held until the handler returns. Errors become
// gRPC statuses as the package doc says. It panics if a layer is nil.
func UnaryServerInterceptor(layers ...tower.Layer[UnaryServerCall, any]) grpc.UnaryServerInterceptor {
	svc := build("towergrpc.UnaryServerInterceptor", serveUnary, layers)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		p, err := svc.Ready(ctx)
		if err != nil {
			return nil, readyError(ctx, err)
		}
		res, err := p.Call(ctx, UnaryServerCall{Method: info.FullMethod, Info: info, Req: req, handler: handler})
		return res, callError(err)
	}
}

// StreamServerInterceptor returns an interceptor that runs every streaming
// RPC of a server through one stack made of layers, the first one
// outermost. The stack is built once and shared by all the server's
// streams.
//
// Each stream first waits for the stack to be ready, with the stream's
// context, before its handler starts and before any message is read. The
// handler runs for the stream's whole life, so what the stack reserved is
// held until the stream ends: a concurrency limit of n admits n streams at
// once. The handler sees the context the stack passes down as its stream's
// Context: under a Timeout, a handler that watches it ends the stream at
// the deadline, and the client gets codes.DeadlineExceeded. It panics if a
// layer is nil.
func StreamServerInterceptor(layers ...tower.Layer[StreamServerCall, struct{}]) grpc.StreamServerInterceptor {
	svc := build("towergrpc.StreamServerInterceptor", serveStream, layers)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx := ss.Context()
		p, err := svc.Ready(ctx)
		if err != nil {
			return readyError(ctx, err)
		}
		_, err = p.Call(ctx, StreamServerCall{Method: info.FullMethod, Info: info, Srv: srv, Stream: ss, handler: handler})
		return callError(err)
	}
}
