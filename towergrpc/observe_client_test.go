package towergrpc_test

import (
	"context"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towergrpc"
	"github.com/towergo/tower/towertest"
)

// A clientRPC makes one RPC through a client interceptor under test, with
// ctx: body is the invoker, or the server's side of a stream, which the
// caller reads to its end. It returns the error the caller got.
type clientRPC func(ctx context.Context, body func(context.Context) error) error

// A clientSide is a client interceptor under test: newRPC makes one over a
// stack of kind k, with sink, and returns the function that calls it.
type clientSide struct {
	name   string
	method string
	newRPC func(k stackKind, sink metrics.RequestSink) clientRPC
}

var clientSides = []clientSide{
	{"unary", unaryMethod, func(k stackKind, sink metrics.RequestSink) clientRPC {
		intercept := towergrpc.UnaryClientInterceptor(testStack[unaryClientCall, struct{}](k), towergrpc.WithClientMetrics(sink))
		return func(ctx context.Context, body func(context.Context) error) error {
			return intercept(ctx, unaryMethod, "req", nil, nil, func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
				return body(ctx)
			})
		}
	}},
	{"stream", streamMethod, func(k stackKind, sink metrics.RequestSink) clientRPC {
		intercept := towergrpc.StreamClientInterceptor(testStack[streamClientCall, struct{}](k), towergrpc.WithClientMetrics(sink))
		return func(ctx context.Context, body func(context.Context) error) error {
			streamer := func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
				return &bodyStream{ctx: ctx, body: body}, nil
			}
			cs, err := intercept(ctx, &grpc.StreamDesc{ServerStreams: true}, nil, streamMethod, streamer)
			if err != nil {
				return err
			}
			if err := cs.RecvMsg(nil); err != io.EOF {
				return err
			}
			return nil
		}
	}},
}

// bodyStream is a client stream whose RecvMsg runs body with the stream's
// context, and returns its error, or io.EOF: the stream's end.
type bodyStream struct {
	grpc.ClientStream
	ctx  context.Context
	body func(context.Context) error
}

func (s *bodyStream) RecvMsg(any) error {
	if err := s.body(s.ctx); err != nil {
		return err
	}
	return io.EOF
}

// waitCtxAsGRPC waits for ctx to end and returns the status grpc's client
// returns for it.
func waitCtxAsGRPC(ctx context.Context) error {
	<-ctx.Done()
	return status.FromContextError(ctx.Err()).Err()
}

// Each RPC is reported once it has ended, with its outcome, the code the
// caller got, and the time from the interceptor's start to the end: its
// return, or for a stream, the call on the stream that ended it.
func TestClientMetrics(t *testing.T) {
	tests := []struct {
		name    string
		stack   stackKind
		ctx     func(context.Context) (context.Context, context.CancelFunc)
		body    func(context.Context) error
		outcome metrics.Outcome
		code    codes.Code
		latency time.Duration
	}{
		{"served", noLayers, nil, sleeps(30*time.Millisecond, nil), metrics.OutcomeServed, codes.OK, 30 * time.Millisecond},
		{"timed out", timing, nil, waitCtxAsGRPC, metrics.OutcomeTimedOut, codes.DeadlineExceeded, 100 * time.Millisecond},
		{"server's status", noLayers, nil, sleeps(5*time.Millisecond, status.Error(codes.NotFound, "no such item")), metrics.OutcomeError, codes.NotFound, 5 * time.Millisecond},
		{"plain error", noLayers, nil, sleeps(5*time.Millisecond, errTest), metrics.OutcomeError, codes.Unknown, 5 * time.Millisecond},
		{"canceled", noLayers, cancelAfter(40 * time.Millisecond), waitCtxAsGRPC, metrics.OutcomeCanceled, codes.Canceled, 40 * time.Millisecond},
		{"caller's deadline", noLayers, deadlineAfter(60 * time.Millisecond), waitCtxAsGRPC, metrics.OutcomeTimedOut, codes.DeadlineExceeded, 60 * time.Millisecond},
		{"broken stack", brokenStack, nil, nil, metrics.OutcomeError, codes.Unavailable, 0},
	}
	for _, side := range clientSides {
		for _, tt := range tests {
			t.Run(side.name+"/"+tt.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var sink recorder
					call := side.newRPC(tt.stack, &sink)
					ctx := t.Context()
					if tt.ctx != nil {
						var cancel context.CancelFunc
						ctx, cancel = tt.ctx(ctx)
						defer cancel()
					}
					err := call(ctx, tt.body)
					if c := status.Code(err); c != tt.code {
						t.Errorf("the caller got %v (%v), want %v", c, err, tt.code)
					}
					// No synctest.Wait: the RPC is reported by the time the
					// caller hears of its end.
					sink.expect(t, rpc(metrics.GRPCClient, side.method, tt.outcome, tt.code, tt.latency))
				})
			})
		}
	}
}

// As on the server: the latency includes the wait for readiness, an RPC
// that gives up while it waits is canceled, and one shed never leaves.
func TestClientMetricsReadiness(t *testing.T) {
	for _, side := range clientSides {
		t.Run(side.name+"/waits", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sink recorder
				call := side.newRPC(limited, &sink)
				go call(t.Context(), sleeps(20*time.Millisecond, nil))
				synctest.Wait() // the first RPC holds the permit
				ctx, cancel := cancelAfter(15 * time.Millisecond)(t.Context())
				defer cancel()
				err := call(ctx, sleeps(time.Hour, nil))
				checkStatus(t, err, codes.Canceled, "context canceled")
				sink.expect(t, rpc(metrics.GRPCClient, side.method, metrics.OutcomeCanceled, codes.Canceled, 15*time.Millisecond))

				// At 15ms: this one waits 5ms for the permit, and takes 30ms.
				if err := call(t.Context(), sleeps(30*time.Millisecond, nil)); err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				sink.expect(t,
					rpc(metrics.GRPCClient, side.method, metrics.OutcomeServed, codes.OK, 20*time.Millisecond),
					rpc(metrics.GRPCClient, side.method, metrics.OutcomeServed, codes.OK, 35*time.Millisecond))
			})
		})
		t.Run(side.name+"/shed", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sink recorder
				call := side.newRPC(shedding, &sink)
				release := make(chan struct{})
				go call(t.Context(), func(context.Context) error { <-release; return nil })
				synctest.Wait() // the first RPC holds the permit
				reached := false
				err := call(t.Context(), func(context.Context) error { reached = true; return nil })
				checkStatus(t, err, codes.ResourceExhausted, "service overloaded")
				if reached {
					t.Error("the shed RPC was sent")
				}
				sink.expect(t, rpc(metrics.GRPCClient, side.method, metrics.OutcomeShed, codes.ResourceExhausted, 0))

				time.Sleep(10 * time.Millisecond)
				close(release)
				synctest.Wait()
				sink.expect(t, rpc(metrics.GRPCClient, side.method, metrics.OutcomeServed, codes.OK, 10*time.Millisecond))
			})
		})
	}
}

// A panic in a unary client's stack goes on up to the caller, reported on
// its way as an error with codes.Unknown.
func TestUnaryClientMetricsPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sink recorder
		call := clientSides[0].newRPC(limited, &sink)
		towertest.Panics(t, "boom", func() {
			call(t.Context(), func(context.Context) error {
				time.Sleep(7 * time.Millisecond)
				panic("boom")
			})
		})
		sink.expect(t, rpc(metrics.GRPCClient, unaryMethod, metrics.OutcomeError, codes.Unknown, 7*time.Millisecond))
	})
}

// A panic in a client stream's stack, on the interceptor's goroutine, is
// an error: before the stream is the caller's, with the codes.Internal the
// caller gets; after, with the code the stream ended with, which the
// caller got.
func TestStreamClientMetricsPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sink recorder
		intercept := towergrpc.StreamClientInterceptor(towergrpc.StreamClientStack(), towergrpc.WithClientMetrics(&sink))
		_, err := intercept(t.Context(), &grpc.StreamDesc{}, nil, streamMethod, panickingStreamer("boom"))
		if c := status.Code(err); c != codes.Internal {
			t.Fatalf("got %v, want codes.Internal", err)
		}
		sink.expect(t, rpc(metrics.GRPCClient, streamMethod, metrics.OutcomeError, codes.Internal, 0))

		intercept = towergrpc.StreamClientInterceptor(panicsAfter("late"), towergrpc.WithClientMetrics(&sink))
		cs, err := intercept(t.Context(), &grpc.StreamDesc{}, nil, streamMethod, streamerOf(&fakeClientStream{}, nil))
		if err != nil {
			t.Fatalf("got %v, want a stream", err)
		}
		time.Sleep(3 * time.Millisecond)
		if err := cs.RecvMsg(nil); err != nil { // the one response: the stream ends
			t.Fatalf("RecvMsg: got %v, want nil", err)
		}
		sink.expect(t, rpc(metrics.GRPCClient, streamMethod, metrics.OutcomeError, codes.OK, 3*time.Millisecond))
	})
}

// A client stream ends in each of the ways grpc ends one, and is reported
// with the code of the error that ended it.
func TestStreamClientMetricsEnds(t *testing.T) {
	errBroken := status.Error(codes.Unavailable, "connection lost")
	tests := []struct {
		name    string
		stream  fakeClientStream
		op      func(grpc.ClientStream) error
		outcome metrics.Outcome
		code    codes.Code
	}{
		{"RecvMsg io.EOF", fakeClientStream{recv: io.EOF}, recvMsg, metrics.OutcomeServed, codes.OK},
		{"RecvMsg error", fakeClientStream{recv: errBroken}, recvMsg, metrics.OutcomeError, codes.Unavailable},
		{"SendMsg error", fakeClientStream{send: errBroken}, sendMsg, metrics.OutcomeError, codes.Unavailable},
		{"Header error", fakeClientStream{header: errBroken}, header, metrics.OutcomeError, codes.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sink recorder
				intercept := towergrpc.StreamClientInterceptor(towergrpc.StreamClientStack(), towergrpc.WithClientMetrics(&sink))
				fake := tt.stream
				cs, err := intercept(t.Context(), &grpc.StreamDesc{ServerStreams: true}, nil, streamMethod, streamerOf(&fake, nil))
				if err != nil {
					t.Fatalf("got %v, want a stream", err)
				}
				time.Sleep(12 * time.Millisecond)
				tt.op(cs)
				sink.expect(t, rpc(metrics.GRPCClient, streamMethod, tt.outcome, tt.code, 12*time.Millisecond))
			})
		})
	}
}

// A client stream that its context ends, while the caller makes no call on
// it, is reported then, with the code grpc fails the stream with.
func TestStreamClientMetricsContextEnds(t *testing.T) {
	tests := []struct {
		name    string
		stack   stackKind
		ctx     func(context.Context) (context.Context, context.CancelFunc)
		outcome metrics.Outcome
		code    codes.Code
		latency time.Duration
	}{
		{"caller cancels", noLayers, cancelAfter(25 * time.Millisecond), metrics.OutcomeCanceled, codes.Canceled, 25 * time.Millisecond},
		{"caller's deadline", noLayers, deadlineAfter(60 * time.Millisecond), metrics.OutcomeTimedOut, codes.DeadlineExceeded, 60 * time.Millisecond},
		{"Timeout", timing, cancelAfter(time.Hour), metrics.OutcomeTimedOut, codes.DeadlineExceeded, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sink recorder
				intercept := towergrpc.StreamClientInterceptor(testStack[streamClientCall, struct{}](tt.stack), towergrpc.WithClientMetrics(&sink))
				ctx, cancel := tt.ctx(t.Context())
				defer cancel()
				if _, err := intercept(ctx, &grpc.StreamDesc{ServerStreams: true}, nil, streamMethod, streamerOf(&fakeClientStream{}, nil)); err != nil {
					t.Fatalf("got %v, want a stream", err)
				}
				synctest.Wait()
				sink.expect(t) // the stream is open
				time.Sleep(tt.latency)
				synctest.Wait()
				sink.expect(t, rpc(metrics.GRPCClient, streamMethod, tt.outcome, tt.code, tt.latency))
			})
		})
	}
}
