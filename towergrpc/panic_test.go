package towergrpc_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towergrpc"
	"github.com/towergo/tower/towertest"
)

// panicsAfter is a layer whose call panics with v once the call below it
// has returned: for a client stream, once the stream has ended.
func panicsAfter(v any) tower.Layer[streamClientCall, struct{}] {
	return tower.LayerFunc[streamClientCall, struct{}](func(inner tower.Service[streamClientCall, struct{}]) tower.Service[streamClientCall, struct{}] {
		return tower.ServiceFunc[streamClientCall, struct{}](func(ctx context.Context, c streamClientCall) (struct{}, error) {
			tower.Call(ctx, inner, c)
			panic(v)
		})
	})
}

func panickingStreamer(v any) grpc.Streamer {
	return func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
		if v == nil {
			runtime.Goexit()
		}
		panic(v)
	}
}

// A panic in a client stream's stack, which runs on the interceptor's
// goroutine, must not end the program. Before the stream is the caller's,
// the caller gets it: codes.Internal, with the *tower.PanicError under the
// status. The limit's permit is back.
func TestStreamClientPanicBeforeOpening(t *testing.T) {
	for _, tt := range []struct {
		name     string
		value    any // nil: runtime.Goexit
		contains string
	}{
		{"panic", "boom", "boom"},
		{"Goexit", nil, "runtime.Goexit"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sem := limit.NewSemaphore(1)
				intercept := towergrpc.StreamClientInterceptor(limit.NewSharedConcurrencyLayer[streamClientCall, struct{}](sem))
				cs, err := intercept(t.Context(), &grpc.StreamDesc{}, nil, "/m", panickingStreamer(tt.value))
				if cs != nil || status.Code(err) != codes.Internal {
					t.Fatalf("got %v, %v; want no stream and codes.Internal", cs, err)
				}
				var pe *tower.PanicError
				if !errors.As(err, &pe) || !strings.Contains(pe.Error(), tt.contains) ||
					pe.Where != "the stream stack's Call, on a StreamClientInterceptor's goroutine" {
					t.Errorf("got %v, want a *tower.PanicError from the interceptor's goroutine that says %q", err, tt.contains)
				}
				synctest.Wait()
				if n := sem.Available(); n != 1 {
					t.Errorf("got %d permits free, want 1", n)
				}
			})
		})
	}
}

// A panic in a client stream's stack once the stream is the caller's (a
// layer that panics once the stream has ended) has no caller to go to: it
// is logged, and the stream ends as usual.
func TestStreamClientPanicAfterOpening(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(old)
	synctest.Test(t, func(t *testing.T) {
		sem := limit.NewSemaphore(1)
		intercept := towergrpc.StreamClientInterceptor(tower.Stack(panicsAfter("late"), limit.NewSharedConcurrencyLayer[streamClientCall, struct{}](sem)))
		cs, err := intercept(t.Context(), &grpc.StreamDesc{}, nil, "/m", streamerOf(&fakeClientStream{}, nil))
		if err != nil {
			t.Fatalf("got %v, want a stream", err)
		}
		if err := cs.RecvMsg(nil); err != nil { // the one response: the stream ends
			t.Errorf("RecvMsg: got %v, want nil", err)
		}
		if n := sem.Available(); n != 1 {
			t.Errorf("got %d permits free once the stream ended, want 1", n)
		}
	})
	for _, want := range []string{"level=ERROR", "StreamClientInterceptor's goroutine", "panic=late", "stack="} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the log lacks %s:\n%s", want, buf.String())
		}
	}
}

// A handler's panic that a Timeout in Abandon mode recovered on its
// goroutine fails the RPC with codes.Internal, and the limit's permit is
// back for the next call.
func TestUnaryServerAbandonedHandlerPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sem := limit.NewSemaphore(1)
		intercept := towergrpc.UnaryServerInterceptor(tower.Stack(
			timeout.NewLayer[unaryCall, any](time.Second, timeout.WithMode(timeout.Abandon)),
			limit.NewSharedConcurrencyLayer[unaryCall, any](sem),
		))
		_, err := intercept(t.Context(), "req", unaryInfo, func(context.Context, any) (any, error) {
			panic(status.Error(codes.NotFound, "a panic's value that is a status"))
		})
		var pe *tower.PanicError
		if status.Code(err) != codes.Internal || !errors.As(err, &pe) {
			t.Errorf("got %v, want codes.Internal with the *tower.PanicError under it", err)
		}
		synctest.Wait()
		if n := sem.Available(); n != 1 {
			t.Errorf("got %d permits free, want 1", n)
		}
	})
}

// panickySink is a metrics.RequestSink that panics with its value.
type panickySink struct{ v any }

func (s panickySink) ObserveRequest(metrics.Request) { panic(s.v) }

// A request sink that panics as it is told of a stream handed to the
// caller, which it is on the interceptor's goroutine, does not end the
// program: its panic is logged, as no caller is left to hear of it, and
// the stream ends as usual, its permit given back.
func TestStreamClientSinkPanics(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(old)
	synctest.Test(t, func(t *testing.T) {
		sem := limit.NewSemaphore(1)
		intercept := towergrpc.StreamClientInterceptor(limit.NewSharedConcurrencyLayer[streamClientCall, struct{}](sem),
			towergrpc.WithClientMetrics(panickySink{"sink broke"}))
		cs, err := intercept(t.Context(), &grpc.StreamDesc{}, nil, "/m", streamerOf(&fakeClientStream{}, nil))
		if err != nil {
			t.Fatalf("got %v, want a stream", err)
		}
		if err := cs.RecvMsg(nil); err != nil { // the one response: the stream ends
			t.Errorf("RecvMsg: got %v, want nil", err)
		}
		if n := sem.Available(); n != 1 {
			t.Errorf("got %d permits free once the stream ended, want 1", n)
		}
	})
	for _, want := range []string{"level=ERROR", "request sink", "panic=\"sink broke\"", "stack="} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the log lacks %s:\n%s", want, buf.String())
		}
	}
}

// A request sink that panics on the caller's goroutine, as a unary RPC
// or a stream that was never handed over is reported, and a priority
// function that panics, panic up to the caller, once the stack has given
// back what it held.
func TestUserCodePanicsOnCallersGoroutine(t *testing.T) {
	sem := limit.NewSemaphore(1)
	prioritized := towergrpc.UnaryServerInterceptor(limit.NewSharedConcurrencyLayer[unaryCall, any](sem),
		towergrpc.WithPriority(func(context.Context, string) tower.Priority { panic("priority") }))
	towertest.Panics(t, "priority", func() {
		prioritized(t.Context(), "req", unaryInfo, func(context.Context, any) (any, error) { return "res", nil })
	})
	server := towergrpc.UnaryServerInterceptor(limit.NewSharedConcurrencyLayer[unaryCall, any](sem),
		towergrpc.WithServerMetrics(panickySink{"server sink"}))
	towertest.Panics(t, "server sink", func() {
		server(t.Context(), "req", unaryInfo, func(context.Context, any) (any, error) { return "res", nil })
	})
	client := towergrpc.UnaryClientInterceptor(limit.NewSharedConcurrencyLayer[unaryClientCall, struct{}](sem),
		towergrpc.WithClientMetrics(panickySink{"client sink"}))
	towertest.Panics(t, "client sink", func() {
		client(t.Context(), "/m", "req", nil, nil, func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil })
	})
	stream := towergrpc.StreamClientInterceptor(limit.NewSharedConcurrencyLayer[streamClientCall, struct{}](sem),
		towergrpc.WithClientMetrics(panickySink{"stream sink"}))
	towertest.Panics(t, "stream sink", func() {
		stream(t.Context(), &grpc.StreamDesc{}, nil, "/m", streamerOf(nil, errors.New("no stream")))
	})
	if n := sem.Available(); n != 1 {
		t.Errorf("got %d permits free, want 1", n)
	}
}
