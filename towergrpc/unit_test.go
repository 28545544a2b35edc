package towergrpc_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towergrpc"
	"github.com/towergo/tower/towertest"
)

// These tests call the interceptors directly, with fake handlers, invokers
// and streams, in virtual time: no network.

var unaryInfo = &grpc.UnaryServerInfo{FullMethod: "/test.Service/Unary"}
var streamInfo = &grpc.StreamServerInfo{FullMethod: "/test.Service/Stream", IsServerStream: true}

func TestUnaryServerTimeoutAtDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		intercept := towergrpc.UnaryServerInterceptor(timeout.NewLayer[unaryCall, any](100 * time.Millisecond))
		handler := func(ctx context.Context, _ any) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		start := time.Now()
		_, err := intercept(t.Context(), "req", unaryInfo, handler)
		checkStatus(t, err, codes.DeadlineExceeded, "request timed out")
		if !errors.Is(err, timeout.ErrElapsed) {
			t.Errorf("got errors.Is(%v, ErrElapsed) false, want true", err)
		}
		if d := time.Since(start); d != 100*time.Millisecond {
			t.Errorf("got the error at %v, want 100ms", d)
		}
	})
}

// The handler runs only once the stack is ready: a call waiting for a
// limit's permit has not reached it, and one that gives up while waiting
// never does.
func TestUnaryServerReadyBeforeHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sem := limit.NewSemaphore(1)
		intercept := towergrpc.UnaryServerInterceptor(limit.NewSharedConcurrencyLayer[unaryCall, any](sem))
		var handled []any
		release := make(chan struct{})
		handler := func(_ context.Context, req any) (any, error) {
			handled = append(handled, req)
			<-release
			return req, nil
		}
		first := make(chan any, 1)
		go func() {
			res, _ := intercept(t.Context(), "first", unaryInfo, handler)
			first <- res
		}()
		synctest.Wait()
		ctx, cancel := context.WithCancel(t.Context())
		second := make(chan error, 1)
		go func() {
			_, err := intercept(ctx, "second", unaryInfo, handler)
			second <- err
		}()
		synctest.Wait()
		if len(handled) != 1 || sem.Waiting() != 1 {
			t.Fatalf("got %v handled, %d waiting, want [first] and 1", handled, sem.Waiting())
		}
		cancel()
		err := <-second
		checkStatus(t, err, codes.Canceled, "context canceled")
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got errors.Is(%v, context.Canceled) false, want true", err)
		}
		close(release)
		if res := <-first; res != "first" {
			t.Fatalf("got %v, want first", res)
		}
		if len(handled) != 1 || sem.Available() != 1 {
			t.Fatalf("got %v handled, %d free, want [first] and 1", handled, sem.Available())
		}
	})
}

// fakeServerStream is a grpc.ServerStream that has only a context.
type fakeServerStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *fakeServerStream) Context() context.Context { return s.ctx }

type ctxKey struct{}

func TestStreamServerContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.WithValue(t.Context(), ctxKey{}, "v")
		ss := &fakeServerStream{ctx: ctx}
		intercept := towergrpc.StreamServerInterceptor(timeout.NewLayer[streamCall, struct{}](100 * time.Millisecond))
		start := time.Now()
		err := intercept("srv", ss, streamInfo, func(srv any, stream grpc.ServerStream) error {
			sctx := stream.Context()
			if d, ok := sctx.Deadline(); !ok || d.Sub(start) != 100*time.Millisecond {
				t.Errorf("got deadline %v, %v, want 100ms after the start", d.Sub(start), ok)
			}
			if v := sctx.Value(ctxKey{}); v != "v" || srv != "srv" {
				t.Errorf("got value %v and srv %v, want v and srv", v, srv)
			}
			<-sctx.Done()
			return sctx.Err()
		})
		checkStatus(t, err, codes.DeadlineExceeded, "request timed out")
		if d := time.Since(start); d != 100*time.Millisecond {
			t.Errorf("got the error at %v, want 100ms", d)
		}

		// Without a layer, the handler sees the stream's own context.
		err = towergrpc.StreamServerInterceptor(towergrpc.StreamServerStack())("srv", ss, streamInfo, func(_ any, stream grpc.ServerStream) error {
			if stream.Context() != ctx {
				t.Error("the handler's stream has another context, want the stream's own")
			}
			return errTest
		})
		if err != errTest {
			t.Errorf("got %v, want the handler's error unchanged", err)
		}
	})
}

func TestUnaryClientInvokesWithStackContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		intercept := towergrpc.UnaryClientInterceptor(timeout.NewLayer[unaryClientCall, struct{}](100 * time.Millisecond))
		start := time.Now()
		var got []any
		invoker := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
			d, _ := ctx.Deadline()
			got = append(got, method, req, reply, cc == nil, len(opts), d.Sub(start))
			return errTest
		}
		err := intercept(t.Context(), "/test.Service/Unary", "req", "reply", nil, invoker, grpc.WaitForReady(true))
		if err != errTest {
			t.Errorf("got %v, want the invoker's error unchanged", err)
		}
		want := []any{"/test.Service/Unary", "req", "reply", true, 1, 100 * time.Millisecond}
		if len(got) != len(want) {
			t.Fatalf("the invoker got %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("the invoker got %v, want %v", got, want)
			}
		}
	})
}

// fakeClientStream is a grpc.ClientStream whose calls return set errors.
type fakeClientStream struct {
	grpc.ClientStream
	recv, send, header error
}

func (s *fakeClientStream) RecvMsg(any) error            { return s.recv }
func (s *fakeClientStream) SendMsg(any) error            { return s.send }
func (s *fakeClientStream) Header() (metadata.MD, error) { return nil, s.header }
func (s *fakeClientStream) CloseSend() error             { return nil }
func (s *fakeClientStream) Context() context.Context     { return context.Background() }
func (s *fakeClientStream) Trailer() metadata.MD         { return nil }

func streamerOf(s grpc.ClientStream, err error) grpc.Streamer {
	return func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
		return s, err
	}
}

// A client stream holds its permit until it ends, in each of the ways grpc
// ends one, and gives it back before the caller hears of the end.
func TestStreamClientEnds(t *testing.T) {
	errBroken := errors.New("broken")
	tests := []struct {
		name          string
		serverStreams bool
		stream        fakeClientStream
		op            func(grpc.ClientStream) error
		ends          bool
	}{
		{"RecvMsg io.EOF", true, fakeClientStream{recv: io.EOF}, recvMsg, true},
		{"RecvMsg error", true, fakeClientStream{recv: errBroken}, recvMsg, true},
		{"RecvMsg message, server streams", true, fakeClientStream{}, recvMsg, false},
		{"RecvMsg the response, server does not stream", false, fakeClientStream{}, recvMsg, true},
		{"SendMsg io.EOF", true, fakeClientStream{send: io.EOF}, sendMsg, false},
		{"SendMsg error", true, fakeClientStream{send: errBroken}, sendMsg, true},
		{"SendMsg sent", true, fakeClientStream{}, sendMsg, false},
		{"Header error", true, fakeClientStream{header: errBroken}, header, true},
		{"Header io.EOF", true, fakeClientStream{header: io.EOF}, header, false},
		{"Header received", true, fakeClientStream{}, header, false},
		{"CloseSend", true, fakeClientStream{}, func(s grpc.ClientStream) error { return s.CloseSend() }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sem := limit.NewSemaphore(1)
				intercept := towergrpc.StreamClientInterceptor(limit.NewSharedConcurrencyLayer[streamClientCall, struct{}](sem))
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				desc := &grpc.StreamDesc{ServerStreams: tt.serverStreams}
				fake := tt.stream
				cs, err := intercept(ctx, desc, nil, "/test.Service/Stream", streamerOf(&fake, nil))
				if err != nil {
					t.Fatalf("got %v, want a stream", err)
				}
				if n := sem.Available(); n != 0 {
					t.Fatalf("got %d permits free with the stream open, want 0", n)
				}
				tt.op(cs)
				if !tt.ends {
					synctest.Wait()
				}
				// Once the op that ended the stream has returned, the permit is
				// back: no synctest.Wait needed.
				if got, want := sem.Available(), b2i(tt.ends); got != want {
					t.Fatalf("got %d permits free after the op, want %d", got, want)
				}
				cancel() // the caller's context ending ends any stream
				synctest.Wait()
				if n := sem.Available(); n != 1 {
					t.Fatalf("got %d permits free once ctx ended, want 1", n)
				}
			})
		})
	}
}

// A Timeout in a client stream stack bounds the stream's whole life.
func TestStreamClientTimeoutBoundsStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sem := limit.NewSemaphore(1)
		intercept := towergrpc.StreamClientInterceptor(tower.Stack(
			timeout.NewLayer[streamClientCall, struct{}](100*time.Millisecond),
			limit.NewSharedConcurrencyLayer[streamClientCall, struct{}](sem),
		))
		var streamCtx context.Context
		streamer := func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
			streamCtx = ctx
			return &fakeClientStream{}, nil
		}
		start := time.Now()
		if _, err := intercept(t.Context(), &grpc.StreamDesc{ServerStreams: true}, nil, "/m", streamer); err != nil {
			t.Fatalf("got %v, want a stream", err)
		}
		<-streamCtx.Done() // grpc ends the stream when its context ends
		if d := time.Since(start); d != 100*time.Millisecond {
			t.Errorf("the stream's context ended at %v, want 100ms", d)
		}
		synctest.Wait()
		if n := sem.Available(); n != 1 {
			t.Fatalf("got %d permits free after the deadline, want 1", n)
		}
	})
}

func recvMsg(s grpc.ClientStream) error { return s.RecvMsg(nil) }
func sendMsg(s grpc.ClientStream) error { return s.SendMsg(nil) }
func header(s grpc.ClientStream) error  { _, err := s.Header(); return err }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestStreamClientOpenFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sem := limit.NewSemaphore(1)
		intercept := towergrpc.StreamClientInterceptor(limit.NewSharedConcurrencyLayer[streamClientCall, struct{}](sem))
		cs, err := intercept(t.Context(), &grpc.StreamDesc{}, nil, "/m", streamerOf(nil, errTest))
		if cs != nil || err != errTest {
			t.Fatalf("got %v, %v, want nil and the streamer's error", cs, err)
		}
		if n := sem.Available(); n != 1 {
			t.Fatalf("got %d permits free, want 1", n)
		}

		// The stack's view of the error is what the caller gets.
		intercept = towergrpc.StreamClientInterceptor(timeout.NewLayer[streamClientCall, struct{}](100 * time.Millisecond))
		slow := func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		start := time.Now()
		_, err = intercept(t.Context(), &grpc.StreamDesc{}, nil, "/m", slow)
		checkStatus(t, err, codes.DeadlineExceeded, "request timed out")
		if d := time.Since(start); d != 100*time.Millisecond {
			t.Errorf("got the error at %v, want 100ms", d)
		}
	})
}

// A stream stack must call the step below once: a second call cannot open
// the stream again, and a stack that answers without opening it fails.
func TestStreamClientStackMisuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var second error
		twice := tower.LayerFunc[streamClientCall, struct{}](func(inner tower.Service[streamClientCall, struct{}]) tower.Service[streamClientCall, struct{}] {
			return tower.ServiceFunc[streamClientCall, struct{}](func(ctx context.Context, c streamClientCall) (struct{}, error) {
				if _, err := tower.Call(ctx, inner, c); err != nil {
					return struct{}{}, err
				}
				_, second = tower.Call(ctx, inner, c)
				return struct{}{}, second
			})
		})
		intercept := towergrpc.StreamClientInterceptor(twice)
		cs, err := intercept(t.Context(), &grpc.StreamDesc{}, nil, "/m", streamerOf(&fakeClientStream{}, nil))
		if err != nil {
			t.Fatalf("got %v, want the first stream", err)
		}
		cs.RecvMsg(nil) // the one response: the stream ends, and the layer tries again
		checkStatus(t, second, codes.Internal, "towergrpc: the stack opened a stream twice")

		answers := tower.LayerFunc[streamClientCall, struct{}](func(tower.Service[streamClientCall, struct{}]) tower.Service[streamClientCall, struct{}] {
			return tower.ServiceFunc[streamClientCall, struct{}](func(context.Context, streamClientCall) (struct{}, error) {
				return struct{}{}, nil
			})
		})
		cs, err = towergrpc.StreamClientInterceptor(answers)(t.Context(), &grpc.StreamDesc{}, nil, "/m", streamerOf(&fakeClientStream{}, nil))
		if cs != nil {
			t.Fatalf("got a stream, want none")
		}
		checkStatus(t, err, codes.Internal, "towergrpc: the stack answered without opening the stream")
	})
}

// wrapsInNil is a layer that wraps a service in a typed nil.
var wrapsInNil = tower.LayerFunc[unaryClientCall, struct{}](func(tower.Service[unaryClientCall, struct{}]) tower.Service[unaryClientCall, struct{}] {
	return (*nilService)(nil)
})

type nilService struct{}

func (*nilService) Ready(context.Context) (tower.Permit[unaryClientCall, struct{}], error) {
	panic("a nil service was used")
}

// A stack of no layers is no nil layer: it wraps the step in nothing.
func TestInterceptorsTakeEmptyStack(t *testing.T) {
	intercept := towergrpc.UnaryServerInterceptor(tower.Stack[unaryCall, any]())
	res, err := intercept(t.Context(), "req", unaryInfo, func(_ context.Context, req any) (any, error) { return req, nil })
	if res != "req" || err != nil {
		t.Errorf("got %v, %v; want req, nil", res, err)
	}
}

func TestInterceptorsPanicOnBadInput(t *testing.T) {
	var counts metrics.Counts
	tests := []struct {
		name string
		f    func()
		want string
	}{
		{"UnaryServerInterceptor nil stack", func() { towergrpc.UnaryServerInterceptor(nil) }, "towergrpc.UnaryServerInterceptor: nil stack"},
		{"StreamServerInterceptor nil stack", func() { towergrpc.StreamServerInterceptor(nil) }, "towergrpc.StreamServerInterceptor: nil stack"},
		{"UnaryClientInterceptor nil stack", func() { towergrpc.UnaryClientInterceptor(nil) }, "towergrpc.UnaryClientInterceptor: nil stack"},
		{"StreamClientInterceptor nil stack", func() { towergrpc.StreamClientInterceptor(nil) }, "towergrpc.StreamClientInterceptor: nil stack"},
		{"typed nil stack", func() {
			towergrpc.UnaryServerInterceptor(tower.LayerFunc[unaryCall, any](nil))
		}, "towergrpc.UnaryServerInterceptor: nil stack"},
		{"stack that returns a nil service", func() {
			towergrpc.UnaryClientInterceptor(wrapsInNil)
		}, "towergrpc.UnaryClientInterceptor: stack.Wrap returned nil"},
		{"nil server option", func() {
			towergrpc.StreamServerInterceptor(towergrpc.StreamServerStack(), towergrpc.WithServerMetrics(&counts), nil)
		}, "towergrpc.StreamServerInterceptor: option 1 is nil"},
		{"nil client option", func() {
			towergrpc.UnaryClientInterceptor(towergrpc.UnaryClientStack(), nil)
		}, "towergrpc.UnaryClientInterceptor: option 0 is nil"},
		{"WithServerMetrics nil sink", func() { towergrpc.WithServerMetrics(nil) }, "towergrpc.WithServerMetrics: nil sink"},
		{"WithClientMetrics typed nil sink", func() {
			towergrpc.WithClientMetrics((*metrics.Counts)(nil))
		}, "towergrpc.WithClientMetrics: nil sink"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			towertest.Panics(t, tt.want, tt.f)
		})
	}
}

// A nil option panics before the stack wraps anything: a Buffer's worker
// is not started for an interceptor that is never made.
func TestInterceptorsCheckOptionsBeforeWrapping(t *testing.T) {
	wrapped := false
	spy := tower.LayerFunc[unaryCall, any](func(inner tower.Service[unaryCall, any]) tower.Service[unaryCall, any] {
		wrapped = true
		return inner
	})
	towertest.Panics(t, "towergrpc.UnaryServerInterceptor: option 0 is nil", func() {
		towergrpc.UnaryServerInterceptor(spy, nil)
	})
	if wrapped {
		t.Error("the stack wrapped the handler, want the options checked first")
	}
}
