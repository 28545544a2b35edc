package towergrpc

import (
	"context"
	"errors"
	"io"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/safe"
)

// UnaryClientInterceptor returns an interceptor that runs every unary RPC
// a client makes through one stack made of layers, the first one
// outermost: it sees the call first. The stack is built once, so its state
// is shared by all the RPCs made through the interceptor: install it on a
// connection, and a concurrency limit bounds that connection's RPCs in
// flight.
//
// Each RPC first waits for the stack to be ready, with the caller's
// context, and only then calls the invoker, with the context the stack
// passes down. What the stack reserved is held until the invoker returns.
// A request the stack refuses, a shed one for instance, never reaches the
// network, and fails with the status the package doc gives. It panics if a
// layer is nil.
func UnaryClientInterceptor(layers ...tower.Layer[UnaryClientCall, struct{}]) grpc.UnaryClientInterceptor {
	svc := build("towergrpc.UnaryClientInterceptor", invokeUnary, layers)
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		p, err := svc.Ready(ctx)
		if err != nil {
			return readyError(ctx, err)
		}
		_, err = p.Call(ctx, UnaryClientCall{Method: method, Req: req, Reply: reply, Conn: cc, Opts: opts, invoker: invoker})
		return callError(err)
	}
}

// StreamClientInterceptor returns an interceptor that runs the opening of
// every stream a client makes through one stack made of layers, the first
// one outermost, built once and shared by all the streams.
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
// too, so the stream's reservation is free for the caller's next stream.
// A Timeout in the stack bounds the stream's whole life, as a deadline on
// the caller's context would, and the stream then fails as grpc fails it,
// with codes.DeadlineExceeded and grpc's message.
//
// The stack must call the step below it at most once per stream: a retry
// or a hedge cannot open a stream again, because the first one was already
// handed to the caller, and a second attempt fails with codes.Internal.
//
// A panic in the stack's call, which runs on the interceptor's goroutine
// (in a layer, in the streamer or an interceptor after this one), does not
// end the program: before the stream is handed to the caller, the caller
// gets it as a *tower.PanicError with codes.Internal; after, it is logged
// through log/slog, since no caller is left to hear of it. It panics if a
// layer is nil.
func StreamClientInterceptor(layers ...tower.Layer[StreamClientCall, struct{}]) grpc.StreamClientInterceptor {
	svc := build("towergrpc.StreamClientInterceptor", openStream, layers)
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		p, err := svc.Ready(ctx)
		if err != nil {
			return nil, readyError(ctx, err)
		}
		cs := &clientStream{
			desc:    desc,
			started: make(chan struct{}),
			ended:   make(chan struct{}),
			done:    make(chan struct{}),
		}
		call := StreamClientCall{Method: method, Desc: desc, Conn: cc, Opts: opts, streamer: streamer, stream: cs}
		go runStream(ctx, p, call)
		<-cs.started
		if cs.err != nil {
			return nil, cs.err
		}
		return cs, nil
	}
}

// streamCall is the Where of the PanicError of a panic in a client stream
// stack's call, which runs on a goroutine of the interceptor's.
const streamCall = "the stream stack's Call, on a StreamClientInterceptor's goroutine"

// runStream is the goroutine that runs the stack's call for a client
// stream: it opens the stream, hands it to the caller, and holds what the
// stack reserved until the stream has ended. A panic in the stack (a
// layer, the streamer or an interceptor after this one), or its
// runtime.Goexit, must not end the program: it becomes a
// *tower.PanicError, the caller's error if the stream has not been handed
// over yet, and otherwise is reported to safe.Orphan, as no caller is left
// to hear of it. Either way the stack's layers have given back what they
// held on the way up, and the stream's end is not kept waiting.
func runStream(ctx context.Context, p tower.Permit[StreamClientCall, struct{}], call StreamClientCall) {
	cs := call.stream
	defer close(cs.done)
	returned := false
	defer func() {
		if returned {
			return
		}
		pe := safe.Recovered(streamCall, recover())
		if !cs.start(nil, callError(pe)) {
			safe.Orphan(pe)
		}
	}()
	_, err := p.Call(ctx, call)
	returned = true
	if err == nil {
		err = errNotOpened
	}
	cs.start(nil, callError(err)) // unless the stream was opened
}

var (
	// errOpenedTwice is the error of a stack that opens a stream twice.
	errOpenedTwice = newStatusError(codes.Internal, errors.New("towergrpc: the stack opened a stream twice"))
	// errNotOpened is the error of a stack that answers without opening
	// the stream.
	errNotOpened = newStatusError(codes.Internal, errors.New("towergrpc: the stack answered without opening the stream"))
)

// openStream is the innermost step of a client stream stack: it opens the
// stream, hands it to the interceptor, and waits for the stream to end.
func openStream(ctx context.Context, c StreamClientCall) (struct{}, error) {
	cs := c.stream
	if !cs.opened.CompareAndSwap(false, true) {
		return struct{}{}, errOpenedTwice
	}
	s, err := c.streamer(ctx, c.Desc, c.Conn, c.Method, c.Opts...)
	if err != nil {
		// The stack's own view of the error goes to the caller.
		return struct{}{}, err
	}
	if !cs.start(s, nil) {
		// The stack gave up before the stream opened, at a deadline of a
		// Timeout that does not wait; ctx has ended, so grpc ends s.
		return struct{}{}, nil
	}
	select {
	case <-cs.ended:
	case <-ctx.Done():
	}
	return struct{}{}, nil
}

// clientStream is a client stream opened through a stack. It tells the
// stack's call when the stream has ended, and waits for that call to return
// before it reports the end to the caller.
type clientStream struct {
	grpc.ClientStream // set by start, before started is closed
	desc              *grpc.StreamDesc
	err               error // set by start, before started is closed

	opened  atomic.Bool   // the step below the stack has run
	decided atomic.Bool   // start has run
	started chan struct{} // closed by start
	ending  atomic.Bool   // end has run
	ended   chan struct{} // closed by end
	done    chan struct{} // closed when the stack's call has returned
}

// start records the stream, or the error that prevented it, the first time
// it is called, and reports whether this call was the first.
func (cs *clientStream) start(s grpc.ClientStream, err error) bool {
	if !cs.decided.CompareAndSwap(false, true) {
		return false
	}
	cs.ClientStream, cs.err = s, err
	close(cs.started)
	return true
}

// end tells the stack's call that the stream has ended, and waits for that
// call to return, so that what it held is given back.
func (cs *clientStream) end() {
	if cs.ending.CompareAndSwap(false, true) {
		close(cs.ended)
	}
	<-cs.done
}

// RecvMsg receives a message; an error, or the one response of a stream
// whose server does not stream, ends the stream.
func (cs *clientStream) RecvMsg(m any) error {
	err := cs.ClientStream.RecvMsg(m)
	if err != nil || !cs.desc.ServerStreams {
		cs.end()
	}
	return err
}

// SendMsg sends a message; an error other than io.EOF ends the stream. (On
// io.EOF, the stream's status is for RecvMsg to report.)
func (cs *clientStream) SendMsg(m any) error {
	err := cs.ClientStream.SendMsg(m)
	if err != nil && err != io.EOF {
		cs.end()
	}
	return err
}

// Header returns the header metadata; an error other than io.EOF ends the
// stream.
func (cs *clientStream) Header() (metadata.MD, error) {
	md, err := cs.ClientStream.Header()
	if err != nil && err != io.EOF {
		cs.end()
	}
	return md, err
}
