package towergrpc

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towergrpc/internal/mono"
)

// An observation is what an interceptor learns of one RPC for its sink.
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
		r.Status = int(statusCode(o.err, p == metrics.GRPCServer))
	}
	sink.ObserveRequest(r)
}

// outcomeOf is metrics.OutcomeOf, but for a status Canceled or
// DeadlineExceeded, grpc's way of reporting a caller's context ending.
func outcomeOf(err error) metrics.Outcome {
	o := metrics.OutcomeOf(err)
	if o != metrics.OutcomeError || tower.IsUnavailable(err) || panicked(err) {
		return o
	}
	switch statusCode(err, false) {
	case codes.Canceled:
		return metrics.OutcomeCanceled
	case codes.DeadlineExceeded:
		return metrics.OutcomeTimedOut
	}
	return o
}

// statusCode is status.Code without its allocation for an error that
// carries no status; on a server, a context's error has the code grpc
// sends for it.
func statusCode(err error, server bool) codes.Code {
	if err == nil {
		return codes.OK
	}
	if s, ok := errors.AsType[grpcStatus](err); ok && s.GRPCStatus() != nil {
		return s.GRPCStatus().Code()
	}
	if server && errors.Is(err, context.DeadlineExceeded) {
		return codes.DeadlineExceeded
	}
	if server && errors.Is(err, context.Canceled) {
		return codes.Canceled
	}
	return codes.Unknown
}
