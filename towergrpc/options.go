package towergrpc

import (
	"context"

	"google.golang.org/grpc/metadata"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towergrpc/internal/isnil"
)

// A ServerOption configures [UnaryServerInterceptor] or
// [StreamServerInterceptor]. It is not a grpc.ServerOption: it configures
// the interceptor, which is then given to grpc.NewServer in one of those.
//
// The server and the client interceptors take options of two types so
// that an option for one side cannot be given to the other: the compiler
// refuses [WithClientMetrics] on a server interceptor, where one Option
// type would let it through, to report the server's RPCs as a client's.
type ServerOption func(*config)

// A ClientOption configures [UnaryClientInterceptor] or
// [StreamClientInterceptor]. It is not a grpc.DialOption: it configures
// the interceptor, which is then given to grpc.NewClient in one of those.
type ClientOption func(*config)

// config is what the options of either side set.
type config struct {
	requests metrics.RequestSink                                         // nil: no request metrics
	priority func(ctx context.Context, fullMethod string) tower.Priority // nil: every RPC is normal; servers only
	pushback metadata.MD                                                 // sent with a shed call, nil for none; servers only
}

// WithServerMetrics makes a server interceptor report each RPC to sink
// once it has ended: a metrics.Request with
//
//   - Protocol metrics.GRPCServer;
//   - Method the RPC's full method name, "/package.Service/Method";
//   - Status the code the server sends for the error the interceptor
//     returned, as grpc works it out: the error's status's code (0,
//     codes.OK, for no error), or for an error without one,
//     codes.DeadlineExceeded or codes.Canceled for a context's error, and
//     codes.Unknown for any other;
//   - Outcome metrics.OutcomeOf of the stack's error, the one the
//     interceptor mapped to a status, except that a gRPC status with
//     codes.Canceled or codes.DeadlineExceeded is metrics.OutcomeCanceled
//     or metrics.OutcomeTimedOut: it is how grpc says that an RPC's
//     context ended. Any other status, one that a handler chose, such as
//     codes.NotFound, is metrics.OutcomeError: the handler failed;
//   - Latency the time from the interceptor's start to its return:
//     readiness included, and a stream's whole life;
//   - Route and Scheme "": gRPC has no routes apart from methods.
//
// A panic that goes up through the interceptor, which does not recover
// it, is reported as it goes, with metrics.OutcomeError and codes.Unknown:
// the interceptor returned no status, and what the client gets, if
// anything, is up to whoever recovers the panic. The report is made
// before the interceptor returns, so before grpc sends the response.
//
// With a sink, an RPC costs two readings of the clock and the sink's call;
// nothing is allocated. Without one, it costs nothing: the interceptor is
// another function. The default is no metrics. It panics if sink is nil,
// or holds a nil pointer.
func WithServerMetrics(sink metrics.RequestSink) ServerOption {
	if isnil.Is(sink) {
		panic("towergrpc.WithServerMetrics: nil sink")
	}
	return func(c *config) { c.requests = sink }
}

// WithClientMetrics makes a client interceptor report each RPC to sink
// once it has ended, as [WithServerMetrics] does on a server, with
// Protocol metrics.GRPCClient, and:
//
//   - Status the code of the error the caller got, as status.Code tells
//     it: a status's code, and codes.Unknown for an error without one;
//     for a stream handed to the caller, the code of the error the stream
//     ended with (io.EOF, and the response of a stream whose server does
//     not stream, are codes.OK), or that of its context's error, if the
//     context ended the stream first;
//   - Outcome that of the stack's error, as on a server; for a stream
//     whose stack's call returned no error, that of the error the stream
//     ended with. A server's status is an error: the client cannot tell
//     what made the server choose it, except for codes.Canceled and
//     codes.DeadlineExceeded, which grpc also gives for the caller's own
//     context, and are canceled and timed out;
//   - Latency the time from the interceptor's start to its return, or for
//     a stream handed to the caller, to the stream's end as
//     [StreamClientInterceptor] defines it.
//
// A stream is reported once the stack's call has returned: before the
// RecvMsg, SendMsg or Header that ended it returns, or if the stream was
// never handed to the caller, before the interceptor returns. A panic on
// the stack's goroutine is an error, with the code the caller got:
// codes.Internal before the stream is handed over, and after, the code
// the stream ended with. A panic in the sink itself goes on up to the
// caller, except as it is told of a stream handed to the caller, on the
// interceptor's goroutine: that one is logged through log/slog.
//
// It costs what WithServerMetrics costs. The default is no metrics. It
// panics if sink is nil, or holds a nil pointer.
func WithClientMetrics(sink metrics.RequestSink) ClientOption {
	if isnil.Is(sink) {
		panic("towergrpc.WithClientMetrics: nil sink")
	}
	return func(c *config) { c.requests = sink }
}
