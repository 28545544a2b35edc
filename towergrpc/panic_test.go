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
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towergrpc"
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
