package towergrpc

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/metrics"
)

// startStream opens one client stream through svc, the stack's call on a
// goroutine of its own, and returns once that call has opened the stream,
// or failed to, with the error and the stack's error it was mapped from.
func startStream(ctx context.Context, svc tower.Service[StreamClientCall, struct{}], call StreamClientCall, sink metrics.RequestSink, start time.Duration) (_ grpc.ClientStream, err, stackErr error) {
	p, err := svc.Ready(ctx)
	if err != nil {
		return nil, readyError(ctx, err), err
	}
	cs := &clientStream{
		desc:    call.Desc,
		sink:    sink,
		began:   start,
		started: make(chan struct{}),
		ended:   make(chan struct{}),
		done:    make(chan struct{}),
	}
	call.stream = cs
	go runStream(ctx, p, call)
	<-cs.started
	if cs.err != nil {
		return nil, cs.err, cs.stackErr
	}
	return cs, nil, nil
}

// The Where of a panic in a client stream stack's call, and in the sink.
const (
	streamCall = "the stream stack's Call, on a StreamClientInterceptor's goroutine"
	streamSink = "the request sink given with WithClientMetrics, on a StreamClientInterceptor's goroutine"
)

// runStream runs the stack's call for a client stream. A panic or
// runtime.Goexit in the stack becomes the caller's error if the stream has
// not been handed over, otherwise guard.Orphan's, as does one in the sink.
func runStream(ctx context.Context, p tower.Permit[StreamClientCall, struct{}], call StreamClientCall) {
	cs := call.stream
	defer close(cs.done)
	var stackErr error
	returned := false
	defer func() {
		if !returned {
			pe := guard.Recovered(streamCall, recover())
			stackErr = pe
			if !cs.start(nil, callError(pe), pe) {
				guard.Orphan(pe)
			}
		}
		if cs.sink != nil {
			guard.Orphan(guard.Call(streamSink, func() { cs.report(call.Method, stackErr) }))
		}
	}()
	_, stackErr = p.Call(ctx, call)
	returned = true
	failed := stackErr
	if failed == nil {
		failed = errNotOpened
	}
	cs.start(nil, callError(failed), failed) // unless the stream was opened
}

var (
	errOpenedTwice = newStatusError(codes.Internal, errors.New("towergrpc: the stack opened a stream twice"))
	errNotOpened   = newStatusError(codes.Internal, errors.New("towergrpc: the stack answered without opening the stream"))
)

// openStream is the innermost step of a client stream stack.
func openStream(ctx context.Context, c StreamClientCall) (struct{}, error) {
	cs := c.stream
	if !cs.opened.CompareAndSwap(false, true) {
		return struct{}{}, errOpenedTwice
	}
	s, err := c.streamer(ctx, c.Desc, c.Conn, c.Method, c.Opts...)
	if err != nil {
		return struct{}{}, err
	}
	if !cs.start(s, nil, nil) {
		return struct{}{}, nil // a Timeout in Abandon mode gave up first: ctx has ended, and grpc ends s
	}
	select {
	case <-cs.ended:
	case <-ctx.Done():
		cs.finish(callError(ctx.Err()))
		<-cs.ended // a caller's call may have finished first: the report reads endErr once ended is closed
	}
	return struct{}{}, nil
}

// clientStream is a client stream opened through a stack. The caller's
// call that ends it tells the stack's call, and returns only once that
// call has returned. start and finish set their fields before closing
// started and ended.
type clientStream struct {
	grpc.ClientStream // set by start
	desc              *grpc.StreamDesc
	err, stackErr     error // set by start: the error that prevented the stream, and the stack's it was mapped from

	sink   metrics.RequestSink // nil: the stream is not reported
	began  time.Duration       // the reading of the clock the interceptor began at
	endErr error               // set by finish: the error the stream ended with, nil for io.EOF

	opened  atomic.Bool   // the step below the stack has run
	decided atomic.Bool   // start has run
	started chan struct{} // closed by start
	ending  atomic.Bool   // finish has run
	ended   chan struct{} // closed by finish
	done    chan struct{} // closed when the stack's call has returned, and the stream is reported
}

// start records the stream, or the errors that prevented it, and reports
// whether it was the first to.
func (cs *clientStream) start(s grpc.ClientStream, err, stackErr error) bool {
	if !cs.decided.CompareAndSwap(false, true) {
		return false
	}
	cs.ClientStream, cs.err, cs.stackErr = s, err, stackErr
	close(cs.started)
	return true
}

// finish records err, the first time, as the error the stream ended with.
func (cs *clientStream) finish(err error) {
	if cs.ending.CompareAndSwap(false, true) {
		cs.endErr = err
		close(cs.ended)
	}
}

// end finishes the stream with err, the error of the caller's call that
// ended it, and waits for the stack's call to give back what it held.
func (cs *clientStream) end(err error) {
	if err == io.EOF {
		err = nil // the stream's status was OK
	}
	cs.finish(err)
	<-cs.done
}

// report reports a stream handed to the caller, once the stack's call has
// returned with stackErr: with the status the stream ended with, or
// stackErr's if the stack's call returned first (Abandon mode).
func (cs *clientStream) report(method string, stackErr error) {
	<-cs.started
	if cs.err != nil {
		return // the interceptor reported it
	}
	ob := observation{start: cs.began, stackErr: stackErr, ended: true}
	select {
	case <-cs.ended:
		ob.err = cs.endErr
	default:
		ob.err = callError(stackErr)
	}
	if stackErr == nil {
		ob.stackErr = ob.err // the stack took no part in how the stream ended
	}
	ob.report(cs.sink, metrics.GRPCClient, method)
}

// RecvMsg receives a message; an error, or the one response of a server
// that does not stream, ends the stream.
func (cs *clientStream) RecvMsg(m any) error {
	err := cs.ClientStream.RecvMsg(m)
	if err != nil || !cs.desc.ServerStreams {
		cs.end(err)
	}
	return err
}

// SendMsg sends a message; an error ends the stream, as failed says.
func (cs *clientStream) SendMsg(m any) error { return cs.failed(cs.ClientStream.SendMsg(m)) }

// Header returns the header metadata; an error ends the stream, as failed
// says.
func (cs *clientStream) Header() (metadata.MD, error) {
	md, err := cs.ClientStream.Header()
	return md, cs.failed(err)
}

// failed ends the stream if err, of a SendMsg or Header, is an error other
// than io.EOF (whose status RecvMsg reports), and returns err.
func (cs *clientStream) failed(err error) error {
	if err != nil && err != io.EOF {
		cs.end(err)
	}
	return err
}
