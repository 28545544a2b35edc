package towergrpc

import (
	"context"

	"google.golang.org/grpc/metadata"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/metrics"
)

// A ServerOption configures [UnaryServerInterceptor] or
// [StreamServerInterceptor]; it is not a grpc.ServerOption. Server and
// client options have two types so that an option for one side, such as
// [WithClientMetrics], cannot be given to the other.
type ServerOption func(*config)

// A ClientOption configures [UnaryClientInterceptor] or
// [StreamClientInterceptor]; it is not a grpc.DialOption.
type ClientOption func(*config)

// config is what the options of either side set.
type config struct {
	requests metrics.RequestSink                                         // nil: no request metrics
	priority func(ctx context.Context, fullMethod string) tower.Priority // nil: every RPC is normal; servers only
	pushback metadata.MD                                                 // sent with a shed call, nil for none; servers only
}

// WithServerMetrics makes a server interceptor report each RPC to sink
// once it has ended, before grpc sends the response: a metrics.Request
// with Protocol metrics.GRPCServer, Method the full method name, and
//
//   - Status the code the server sends for the error the interceptor
//     returned: its status's (OK for none), DeadlineExceeded or Canceled
//     for a context's error, Unknown for any other;
//   - Outcome metrics.OutcomeOf the stack's error, except that a status
//     Canceled or DeadlineExceeded, grpc's way of saying the RPC's context
//     ended, is canceled or timed out;
//   - Latency from the interceptor's start to its return: readiness
//     included, and a stream's whole life.
//
// A panic that goes up through the interceptor is reported as it goes,
// with metrics.OutcomeError and codes.Unknown. The default is no metrics.
// It panics if sink is nil, or holds a nil pointer.
func WithServerMetrics(sink metrics.RequestSink) ServerOption {
	if guard.IsNil(sink) {
		panic("towergrpc.WithServerMetrics: nil sink")
	}
	return func(c *config) { c.requests = sink }
}

// WithClientMetrics makes a client interceptor report each RPC to sink
// once it has ended, as [WithServerMetrics] does, with Protocol
// metrics.GRPCClient, and:
//
//   - Status the code of the error the caller got, as status.Code tells
//     it; for a stream handed to the caller, that of the error the stream
//     ended with (io.EOF and a non-streaming server's response are OK),
//     or of its context's error if that ended it first;
//   - Outcome as on a server; for a stream whose stack returned no error,
//     that of the error the stream ended with;
//   - Latency to the interceptor's return or, for a stream handed to the
//     caller, to the stream's end as [StreamClientInterceptor] defines it.
//
// A stream is reported before the RecvMsg, SendMsg or Header that ended it
// returns. A panic on the stack's goroutine is an error with the code the
// caller got. A panic in the sink goes on up to the caller, except for a
// stream handed over: that one is logged through log/slog. The default is
// no metrics. It panics if sink is nil, or holds a nil pointer.
func WithClientMetrics(sink metrics.RequestSink) ClientOption {
	if guard.IsNil(sink) {
		panic("towergrpc.WithClientMetrics: nil sink")
	}
	return func(c *config) { c.requests = sink }
}
