package towergrpc_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towergrpc"
)

type unaryClientCall = towergrpc.UnaryClientCall
type streamClientCall = towergrpc.StreamClientCall

// A client-side limit sheds the second concurrent call before it reaches
// the network; the caller gets the status, and the tower error under it.
func TestUnaryClientLimit(t *testing.T) {
	g := newGate()
	sem := limit.NewSemaphore(1)
	client := serve(t, &healthServer{check: g.check}, nil, grpc.WithUnaryInterceptor(towergrpc.UnaryClientInterceptor(tower.Stack(
		loadshed.NewLayer[unaryClientCall, struct{}](),
		limit.NewSharedConcurrencyLayer[unaryClientCall, struct{}](sem),
	))))

	first := make(chan error, 1)
	go func() {
		_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{Service: "first"})
		first <- err
	}()
	<-g.entered
	_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{Service: "second"})
	checkStatus(t, err, codes.ResourceExhausted, "service overloaded")
	if !errors.Is(err, loadshed.ErrOverloaded) {
		t.Errorf("got errors.Is(%v, ErrOverloaded) false, want true", err)
	}

	close(g.open)
	if err := <-first; err != nil {
		t.Fatalf("first call: got %v, want nil", err)
	}
	if n := sem.Available(); n != 1 {
		t.Fatalf("got %d permits free after the call, want 1", n)
	}
	check(t, client, "third")
	if got := <-g.entered; got != "third" {
		t.Fatalf("got %q at the server, want third (second never left the client)", got)
	}
}

func TestUnaryClientTimeout(t *testing.T) {
	g := newGate() // never opened: the server answers when its context ends
	client := serve(t, &healthServer{check: g.check}, nil, grpc.WithUnaryInterceptor(towergrpc.UnaryClientInterceptor(
		timeout.NewLayer[unaryClientCall, struct{}](10*time.Millisecond),
	)))

	_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{})
	checkStatus(t, err, codes.DeadlineExceeded, "request timed out")
	if !errors.Is(err, timeout.ErrElapsed) {
		t.Errorf("got errors.Is(%v, ErrElapsed) false, want true", err)
	}
	// The call may have ended before it reached the server: nothing waits
	// for the handler, which returns when the server stops.
}

// A client stream holds its permit until it ends; once the caller has seen
// the end, the permit is free for the next stream.
func TestStreamClientHoldsPermitForStreamLife(t *testing.T) {
	tests := []struct {
		name string
		end  func(stream healthpb.Health_WatchClient, cancel context.CancelFunc, g *gate) error
		code codes.Code // of the last Recv's error; OK for io.EOF
	}{
		{"server ends the stream", func(stream healthpb.Health_WatchClient, _ context.CancelFunc, g *gate) error {
			close(g.open)
			_, err := stream.Recv()
			return err
		}, codes.OK},
		{"caller cancels", func(stream healthpb.Health_WatchClient, cancel context.CancelFunc, g *gate) error {
			cancel()
			_, err := stream.Recv()
			close(g.open)
			return err
		}, codes.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate()
			sem := limit.NewSemaphore(1)
			client := serve(t, &healthServer{watch: g.watch}, nil, grpc.WithStreamInterceptor(towergrpc.StreamClientInterceptor(tower.Stack(
				loadshed.NewLayer[streamClientCall, struct{}](),
				limit.NewSharedConcurrencyLayer[streamClientCall, struct{}](sem),
			))))

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			first := watch(t, ctx, client, "first")
			<-g.entered

			_, err := client.Watch(t.Context(), &healthpb.HealthCheckRequest{Service: "second"})
			checkStatus(t, err, codes.ResourceExhausted, "service overloaded")
			if n := sem.Available(); n != 0 {
				t.Fatalf("got %d permits free while the first stream is open, want 0", n)
			}

			err = tt.end(first, cancel, g)
			if tt.code == codes.OK {
				if err != io.EOF {
					t.Fatalf("last Recv: got %v, want io.EOF", err)
				}
			} else {
				checkStatus(t, err, tt.code, "context canceled")
			}
			if n := sem.Available(); n != 1 {
				t.Fatalf("got %d permits free once the stream ended, want 1", n)
			}
			third := watch(t, t.Context(), client, "third")
			if got := <-g.entered; got != "third" {
				t.Fatalf("got %q at the server, want third", got)
			}
			if _, err := third.Recv(); err != io.EOF {
				t.Fatalf("third stream: got %v, want io.EOF", err)
			}
		})
	}
}

func TestStreamClientTimeout(t *testing.T) {
	g := newGate() // never opened: the stream lasts until its context ends
	client := serve(t, &healthServer{watch: g.watch}, nil, grpc.WithStreamInterceptor(towergrpc.StreamClientInterceptor(
		timeout.NewLayer[streamClientCall, struct{}](10*time.Millisecond),
	)))
	// The deadline may come before or after the first message.
	stream, err := client.Watch(t.Context(), &healthpb.HealthCheckRequest{})
	for err == nil {
		_, err = stream.Recv()
	}
	// grpc's message depends on which side saw the deadline first.
	if c := status.Code(err); c != codes.DeadlineExceeded {
		t.Fatalf("got %v (%v), want DeadlineExceeded", c, err)
	}
}
