package towergrpc

import (
	"context"

	"google.golang.org/grpc"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/towergrpc/internal/option"
)

// A UnaryServerCall is one unary RPC on its way through a server's stack.
// The innermost step calls the RPC's handler with the call's context and
// Req; a layer may read the fields, or change Req.
type UnaryServerCall struct {
	Method string                // the full method name, "/package.Service/Method"
	Info   *grpc.UnaryServerInfo // what grpc tells interceptors about the method
	Req    any                   // the request message, already decoded

	handler grpc.UnaryHandler
}

// A StreamServerCall is one streaming RPC on its way through a server's
// stack. The innermost step calls the RPC's handler, which runs for the
// stream's whole life, with Stream wrapped so that its Context method
// returns the call's context.
type StreamServerCall struct {
	Method string                 // the full method name
	Info   *grpc.StreamServerInfo // what grpc tells interceptors about the method
	Srv    any                    // the service implementation the handler is called on
	Stream grpc.ServerStream      // the server side of the stream

	handler grpc.StreamHandler
}

// A UnaryClientCall is one unary RPC on its way through a client's stack.
// The innermost step calls the invoker grpc gave the interceptor, which
// decodes the response into Reply.
type UnaryClientCall struct {
	Method string            // the full method name
	Req    any               // the request message
	Reply  any               // the message the response is decoded into
	Conn   *grpc.ClientConn  // the connection the RPC is made on
	Opts   []grpc.CallOption // the RPC's call options

	invoker  grpc.UnaryInvoker
	trailers *trailerSlot // where the attempts leave their trailers for a RetryPolicy
}

// A StreamClientCall is the opening of one client stream on its way
// through a client's stack. The innermost step opens the stream with the
// streamer grpc gave the interceptor, hands it to the caller, and returns
// only when the stream has ended.
type StreamClientCall struct {
	Method string            // the full method name
	Desc   *grpc.StreamDesc  // whether client, server or both stream
	Conn   *grpc.ClientConn  // the connection the stream is opened on
	Opts   []grpc.CallOption // the stream's call options

	streamer grpc.Streamer
	stream   *clientStream
}

// build returns leaf wrapped in stack, and the configuration opts make.
// It panics, naming fn, if stack (even a typed nil) or an option is nil,
// or if stack wraps the leaf in a nil service. The options are checked
// first, so that a panic leaves no Buffer's worker behind.
func build[Req, Res any, O ~func(*config)](fn string, leaf tower.ServiceFunc[Req, Res], stack tower.Layer[Req, Res], opts []O) (tower.Service[Req, Res], config) {
	if guard.IsNil(stack) {
		panic(fn + ": nil stack")
	}
	c := config{pushback: defaultPushback}
	option.Onto(fn, &c, opts)
	svc := stack.Wrap(leaf)
	if guard.IsNil(svc) {
		panic(fn + ": stack.Wrap returned nil")
	}
	return svc, c
}

func serveUnary(ctx context.Context, c UnaryServerCall) (any, error) {
	return c.handler(ctx, c.Req)
}

func serveStream(ctx context.Context, c StreamServerCall) (struct{}, error) {
	// The stream is wrapped whatever the context: comparing two contexts
	// could panic.
	return struct{}{}, c.handler(c.Srv, &serverStream{ServerStream: c.Stream, ctx: ctx})
}

func invokeUnary(ctx context.Context, c UnaryClientCall) (struct{}, error) {
	if s := c.trailers; s != nil && s.want.Load() {
		return struct{}{}, s.invoke(ctx, c)
	}
	return struct{}{}, c.invoker(ctx, c.Method, c.Req, c.Reply, c.Conn, c.Opts...)
}

// serverStream is a grpc.ServerStream whose context is the stack's.
type serverStream struct {
	grpc.ServerStream
	ctx context.Context
}

// Context returns the context the stack called the handler with.
func (s *serverStream) Context() context.Context { return s.ctx }
