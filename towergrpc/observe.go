package towergrpc

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towergrpc/internal/mono"
)

// An observation is what an interceptor learns of one RPC, for the
// request metrics.
type observation struct {
	start    time.Duration // a reading of package mono's clock
	stackErr error         // the stack's error, which gives the outcome
	err      error         // the error the RPC ended with, which gives the status
	ended    bool          // the RPC ended, not aborted by a panic
}

// report reports the RPC o observed, of method, to sink.
func (o *observation) report(sink metrics.RequestSink, p metrics.Protocol, method string) {
	r := metrics.Request{
		Protocol: p,
		Method:   method,
		Status:   int(codes.Unknown), // a panic aborted the RPC
		Outcome:  metrics.OutcomeError,
		Latency:  mono.Now() - o.start,
	}
	if o.ended {
		r.Outcome = outcomeOf(o.stackErr)
		if p == metrics.GRPCServer {
			r.Status = int(sentCode(o.err))
		} else {
			r.Status = int(statusCode(o.err))
		}
	}
	sink.ObserveRequest(r)
}

// outcomeOf returns the outcome of an RPC whose stack failed with err:
// metrics.OutcomeOf, except that a status codes.Canceled or
// codes.DeadlineExceeded is canceled or timed out, since grpc reports a
// caller's context ending that way.
func outcomeOf(err error) metrics.Outcome {
	o := metrics.OutcomeOf(err)
	if o != metrics.OutcomeError || tower.IsUnavailable(err) || panicked(err) {
		return o
	}
	if s, ok := errors.AsType[grpcStatus](err); ok {
		switch s.GRPCStatus().Code() { // a nil *Status's is OK
		case codes.Canceled:
			return metrics.OutcomeCanceled
		case codes.DeadlineExceeded:
			return metrics.OutcomeTimedOut
		}
	}
	return o
}

// grpcStatus is an error that carries a gRPC status.
type grpcStatus interface {
	error
	GRPCStatus() *status.Status
}

// statusCode returns the code of err as status.Code does, without the
// status that status.Code allocates for an error that carries none.
func statusCode(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	if s, ok := errors.AsType[grpcStatus](err); ok && s.GRPCStatus() != nil {
		return s.GRPCStatus().Code()
	}
	return codes.Unknown
}

// sentCode returns the code a grpc server sends for a handler that
// returned err: its status's, a context error's (as
// status.FromContextError), or codes.Unknown.
func sentCode(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	if s, ok := errors.AsType[grpcStatus](err); ok && s.GRPCStatus() != nil {
		return s.GRPCStatus().Code()
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	}
	return codes.Unknown
}
