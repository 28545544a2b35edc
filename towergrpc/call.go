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
	// Method is the full name of the RPC's method,
	// "/package.Service/Method"; it is Info.FullMethod.
	Method string
	// Info is what grpc tells interceptors about the method.
	Info *grpc.UnaryServerInfo
	// Req is the request message, already decoded.
	Req any

	handler grpc.UnaryHandler
}

// A StreamServerCall is one streaming RPC on its way through a server's
// stack. The innermost step calls the RPC's handler, which runs for the
// stream's whole life, with Stream wrapped so that its Context method
// returns the call's context.
type StreamServerCall struct {
	// Method is the full name of the RPC's method; it is Info.FullMethod.
	Method string
	// Info is what grpc tells interceptors about the method.
	Info *grpc.StreamServerInfo
	// Srv is the service implementation the handler is called on.
	Srv any
	// Stream is the server side of the stream.
	Stream grpc.ServerStream

	handler grpc.StreamHandler
}

// A UnaryClientCall is one unary RPC on its way through a client's stack.
// The innermost step calls the invoker grpc gave the interceptor, which
// decodes the response into Reply.
type UnaryClientCall struct {
	// Method is the full name of the RPC's method.
	Method string
	// Req is the request message.
	Req any
	// Reply is the message the response is decoded into.
	Reply any
	// Conn is the connection the RPC is made on.
	Conn *grpc.ClientConn
	// Opts are the RPC's call options.
	Opts []grpc.CallOption

	invoker  grpc.UnaryInvoker
	trailers *trailerSlot // where the attempts leave their trailers for a RetryPolicy: see retry.go
}

// A StreamClientCall is the opening of one client stream on its way
// through a client's stack. The innermost step opens the stream with the
// streamer grpc gave the interceptor, hands it to the caller, and returns
// only when the stream has ended.
type StreamClientCall struct {
	// Method is the full name of the RPC's method.
	Method string
	// Desc describes the stream: whether client, server or both stream.
	Desc *grpc.StreamDesc
	// Conn is the connection the stream is opened on.
	Conn *grpc.ClientConn
	// Opts are the stream's call options.
	Opts []grpc.CallOption

	streamer grpc.Streamer
	stream   *clientStream
}

// build returns leaf wrapped in stack, and the configuration opts make.
// It panics, naming fn, if stack (even a typed nil) or an option is nil,
// or if stack wraps the leaf in a nil service. The options are checked
// before stack wraps anything, so that a panic leaves no Buffer's worker
// behind.
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
	// The handler must see the context a layer gave the call (a
	// Timeout's). The stream is wrapped whatever the context: comparing
	// two contexts could panic.
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
