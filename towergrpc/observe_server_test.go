package towergrpc_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/towergrpc"
	"github.com/towergo/tower/towertest"
)

// These tests call the interceptors directly, in virtual time, and check
// each metrics.Request whole, its latency to the nanosecond.

// A recorder is a RequestSink that keeps what it is given.
type recorder struct {
	mu  sync.Mutex
	got []metrics.Request
}

func (r *recorder) ObserveRequest(q metrics.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, q)
}

// take returns the requests recorded since the last take.
func (r *recorder) take() []metrics.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

// expect fails the test unless the requests recorded since the last take
// are want, in order.
func (r *recorder) expect(t *testing.T, want ...metrics.Request) {
	t.Helper()
	got := r.take()
	if !slices.Equal(got, want) {
		t.Fatalf("got requests\n\t%+v\nwant\n\t%+v", got, want)
	}
}

// rpc returns the Request of an RPC of method that ended with outcome and
// code after latency.
func rpc(p metrics.Protocol, method string, outcome metrics.Outcome, code codes.Code, latency time.Duration) metrics.Request {
	return metrics.Request{Protocol: p, Method: method, Status: int(code), Outcome: outcome, Latency: latency}
}

const (
	unaryMethod  = "/test.Service/Unary"
	streamMethod = "/test.Service/Stream"
)

// waitCtx is a handler's body that waits for ctx to end and returns its
// error.
func waitCtx(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// sleeps returns a handler's body that takes d, in virtual time, and
// returns err.
func sleeps(d time.Duration, err error) func(context.Context) error {
	return func(context.Context) error {
		time.Sleep(d)
		return err
	}
}

func unaryHandler(body func(context.Context) error) grpc.UnaryHandler {
	return func(ctx context.Context, req any) (any, error) {
		if err := body(ctx); err != nil {
			return nil, err
		}
		return req, nil
	}
}

func streamHandler(body func(context.Context) error) grpc.StreamHandler {
	return func(_ any, ss grpc.ServerStream) error { return body(ss.Context()) }
}

// A stackKind names a stack the tests run RPCs through.
type stackKind int

const (
	noLayers    stackKind = iota
	limited               // ConcurrencyLimit(1)
	shedding              // LoadShed > ConcurrencyLimit(1)
	timing                // Timeout(100ms)
	brokenStack           // a stack whose Ready fails with errTest
)

// testStack returns a new stack of kind k.
func testStack[Req, Res any](k stackKind) tower.Layer[Req, Res] {
	switch k {
	case limited:
		return stack.New[Req, Res]().ConcurrencyLimit(1)
	case shedding:
		return stack.New[Req, Res]().LoadShed().ConcurrencyLimit(1)
	case timing:
		return stack.New[Req, Res]().Timeout(100 * time.Millisecond)
	case brokenStack:
		return brokenLayer[Req, Res]()
	}
	return stack.New[Req, Res]()
}

// A serverRPC calls a server interceptor under test once, with ctx and the
// handler's body.
type serverRPC func(ctx context.Context, body func(context.Context) error) error

// A serverSide is a server interceptor under test: newRPC makes one over a
// stack of kind k, with sink, and returns the function that calls it.
type serverSide struct {
	name   string
	method string
	newRPC func(k stackKind, sink metrics.RequestSink) serverRPC
}

var serverSides = []serverSide{
	{"unary", unaryMethod, func(k stackKind, sink metrics.RequestSink) serverRPC {
		intercept := towergrpc.UnaryServerInterceptor(testStack[unaryCall, any](k), towergrpc.WithServerMetrics(sink))
		return func(ctx context.Context, body func(context.Context) error) error {
			_, err := intercept(ctx, "req", unaryInfo, unaryHandler(body))
			return err
		}
	}},
	{"stream", streamMethod, func(k stackKind, sink metrics.RequestSink) serverRPC {
		intercept := towergrpc.StreamServerInterceptor(testStack[streamCall, struct{}](k), towergrpc.WithServerMetrics(sink))
		return func(ctx context.Context, body func(context.Context) error) error {
			return intercept("srv", &fakeServerStream{ctx: ctx}, streamInfo, streamHandler(body))
		}
	}},
}

// Each RPC is reported once it has ended, with its outcome, the code the
// server sends, and the time from the interceptor's start to its return.
func TestServerMetrics(t *testing.T) {
	errNotFound := status.Error(codes.NotFound, "no such item")
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
		{"timed out", timing, nil, waitCtx, metrics.OutcomeTimedOut, codes.DeadlineExceeded, 100 * time.Millisecond},
		{"handler's own status", noLayers, nil, sleeps(5*time.Millisecond, errNotFound), metrics.OutcomeError, codes.NotFound, 5 * time.Millisecond},
		{"handler's plain error", noLayers, nil, sleeps(5*time.Millisecond, errTest), metrics.OutcomeError, codes.Unknown, 5 * time.Millisecond},
		{"handler's status for its context", noLayers, nil, sleeps(5*time.Millisecond, status.Error(codes.Canceled, "gave up")), metrics.OutcomeCanceled, codes.Canceled, 5 * time.Millisecond},
		{"canceled", noLayers, cancelAfter(40 * time.Millisecond), waitCtx, metrics.OutcomeCanceled, codes.Canceled, 40 * time.Millisecond},
		{"client's deadline", noLayers, deadlineAfter(60 * time.Millisecond), waitCtx, metrics.OutcomeTimedOut, codes.DeadlineExceeded, 60 * time.Millisecond},
		{"broken stack", brokenStack, nil, nil, metrics.OutcomeError, codes.Unavailable, 0},
	}
	for _, side := range serverSides {
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
						t.Errorf("the interceptor returned %v (%v), want %v", c, err, tt.code)
					}
					sink.expect(t, rpc(metrics.GRPCServer, side.method, tt.outcome, tt.code, tt.latency))
				})
			})
		}
	}
}

// cancelAfter returns a context that is canceled after d.
func cancelAfter(d time.Duration) func(context.Context) (context.Context, context.CancelFunc) {
	return func(parent context.Context) (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(parent)
		stop := time.AfterFunc(d, cancel)
		return ctx, func() { stop.Stop(); cancel() }
	}
}

// deadlineAfter returns a context whose deadline is d away.
func deadlineAfter(d time.Duration) func(context.Context) (context.Context, context.CancelFunc) {
	return func(parent context.Context) (context.Context, context.CancelFunc) {
		return context.WithTimeout(parent, d)
	}
}

// The latency includes the wait for the stack's readiness; an RPC that
// gives up while it waits is canceled; one shed while another holds the
// limit's permit is shed at once, and never reaches the handler.
func TestServerMetricsReadiness(t *testing.T) {
	for _, side := range serverSides {
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
				sink.expect(t, rpc(metrics.GRPCServer, side.method, metrics.OutcomeCanceled, codes.Canceled, 15*time.Millisecond))

				// At 15ms: this one waits 5ms for the permit, and takes 30ms.
				if err := call(t.Context(), sleeps(30*time.Millisecond, nil)); err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				sink.expect(t,
					rpc(metrics.GRPCServer, side.method, metrics.OutcomeServed, codes.OK, 20*time.Millisecond),
					rpc(metrics.GRPCServer, side.method, metrics.OutcomeServed, codes.OK, 35*time.Millisecond))
			})
		})
		t.Run(side.name+"/shed", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sink recorder
				call := side.newRPC(shedding, &sink)
				release := make(chan struct{})
				go call(t.Context(), func(context.Context) error { <-release; return nil })
				synctest.Wait() // the first RPC is in its handler, blocked
				reached := false
				err := call(t.Context(), func(context.Context) error { reached = true; return nil })
				checkStatus(t, err, codes.ResourceExhausted, "service overloaded")
				if reached {
					t.Error("the shed RPC reached its handler")
				}
				sink.expect(t, rpc(metrics.GRPCServer, side.method, metrics.OutcomeShed, codes.ResourceExhausted, 0))

				time.Sleep(10 * time.Millisecond)
				close(release)
				synctest.Wait()
				sink.expect(t, rpc(metrics.GRPCServer, side.method, metrics.OutcomeServed, codes.OK, 10*time.Millisecond))
			})
		})
	}
}

// A panic goes on up through the interceptor, reported on its way as an
// error with codes.Unknown: the interceptor returned no status.
func TestServerMetricsPanic(t *testing.T) {
	for _, side := range serverSides {
		t.Run(side.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sink recorder
				call := side.newRPC(limited, &sink)
				towertest.Panics(t, "boom", func() {
					call(t.Context(), func(context.Context) error {
						time.Sleep(7 * time.Millisecond)
						panic("boom")
					})
				})
				sink.expect(t, rpc(metrics.GRPCServer, side.method, metrics.OutcomeError, codes.Unknown, 7*time.Millisecond))
			})
		})
	}
}

// A handler's error that has no status, wraps a context's deadline, and
// says it is no timeout, so that the interceptor returns it as it is, is
// reported with codes.DeadlineExceeded: the code grpc's server sends for
// it (status.FromContextError), not the caller's codes.Unknown.
func TestServerMetricsContextErrorWithoutStatus(t *testing.T) {
	errNoTimeout := notTimeout{context.DeadlineExceeded}
	for _, side := range serverSides {
		t.Run(side.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sink recorder
				call := side.newRPC(noLayers, &sink)
				if err := call(t.Context(), sleeps(5*time.Millisecond, errNoTimeout)); err != errNoTimeout {
					t.Errorf("the interceptor returned %v, want the handler's error", err)
				}
				sink.expect(t, rpc(metrics.GRPCServer, side.method, metrics.OutcomeError, codes.DeadlineExceeded, 5*time.Millisecond))
			})
		})
	}
}

// notTimeout is an error that says it is no timeout, whatever it wraps.
type notTimeout struct{ err error }

func (e notTimeout) Error() string { return "no timeout: " + e.err.Error() }
func (e notTimeout) Unwrap() error { return e.err }
func (e notTimeout) Timeout() bool { return false }

// One interceptor serves every method: each RPC is reported with its own,
// and with no Route or Scheme, which gRPC does not have.
func TestServerMetricsMethodIsTheRPCs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sink recorder
		intercept := towergrpc.UnaryServerInterceptor(towergrpc.UnaryServerStack(), towergrpc.WithServerMetrics(&sink))
		for _, m := range []string{"/a.A/One", "/b.B/Two"} {
			intercept(t.Context(), "req", &grpc.UnaryServerInfo{FullMethod: m}, unaryHandler(sleeps(0, nil)))
		}
		sink.expect(t,
			rpc(metrics.GRPCServer, "/a.A/One", metrics.OutcomeServed, codes.OK, 0),
			rpc(metrics.GRPCServer, "/b.B/Two", metrics.OutcomeServed, codes.OK, 0))
	})
}
