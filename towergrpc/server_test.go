package towergrpc_test

import (
	"context"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towergrpc"
)

// These tests run over a real grpc connection, on an in-memory listener,
// with the real clock: they wait on channels, never on time, and assert no
// durations. The tests in unit_test.go cover the same paths in virtual
// time.

type unaryCall = towergrpc.UnaryServerCall
type streamCall = towergrpc.StreamServerCall

func TestUnaryServerPassesThrough(t *testing.T) {
	sem := limit.NewSemaphore(1)
	var seen []string
	record := tower.MapRequestLayer[unaryCall, any](func(c unaryCall) unaryCall {
		req := c.Req.(*healthpb.HealthCheckRequest)
		seen = append(seen, c.Method, c.Info.FullMethod, req.Service)
		c.Req = &healthpb.HealthCheckRequest{Service: req.Service + " via the stack"}
		return c
	})
	var got []string
	h := &healthServer{check: func(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		got = append(got, req.Service, md.Get("x-caller")[0])
		return serving, nil
	}}
	client := serve(t, h, []grpc.ServerOption{grpc.UnaryInterceptor(towergrpc.UnaryServerInterceptor(tower.Stack(
		record, limit.NewSharedConcurrencyLayer[unaryCall, any](sem),
	)))})

	ctx := metadata.AppendToOutgoingContext(t.Context(), "x-caller", "test")
	rsp, err := client.Check(ctx, &healthpb.HealthCheckRequest{Service: "svc"})
	if err != nil || rsp.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("got %v, %v, want SERVING, nil", rsp, err)
	}
	const method = "/grpc.health.v1.Health/Check"
	if want := []string{method, method, "svc"}; !equal(seen, want) {
		t.Errorf("the layer saw %q, want %q", seen, want)
	}
	// The handler got the request the layer made, and the RPC's context.
	if want := []string{"svc via the stack", "test"}; !equal(got, want) {
		t.Errorf("the handler got %q, want %q", got, want)
	}
	if n := sem.Available(); n != 1 {
		t.Errorf("got %d permits free after the call, want 1", n)
	}
}

func TestUnaryServerShedsSecondConcurrentCall(t *testing.T) {
	g := newGate()
	client := serve(t, &healthServer{check: g.check}, []grpc.ServerOption{grpc.UnaryInterceptor(towergrpc.UnaryServerInterceptor(tower.Stack(
		loadshed.NewLayer[unaryCall, any](),
		limit.NewConcurrencyLayer[unaryCall, any](1),
	)))})

	first := make(chan error, 1)
	go func() {
		_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{Service: "first"})
		first <- err
	}()
	if got := <-g.entered; got != "first" {
		t.Fatalf("got %q at the handler, want first", got)
	}
	_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{Service: "second"})
	checkStatus(t, err, codes.ResourceExhausted, "service overloaded")
	select {
	case got := <-g.entered:
		t.Fatalf("got %q at the handler, want no second call there", got)
	default:
	}

	close(g.open)
	if err := <-first; err != nil {
		t.Fatalf("first call: got %v, want nil", err)
	}
	check(t, client, "third") // the permit is free again
	<-g.entered
}

func TestUnaryServerTimeout(t *testing.T) {
	hadDeadline := make(chan bool, 1)
	h := &healthServer{check: func(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
		_, ok := ctx.Deadline()
		hadDeadline <- ok
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	client := serve(t, h, []grpc.ServerOption{grpc.UnaryInterceptor(towergrpc.UnaryServerInterceptor(
		timeout.NewLayer[unaryCall, any](10 * time.Millisecond),
	))})

	// The client sets no deadline: the one the handler sees is the Timeout's.
	_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{})
	checkStatus(t, err, codes.DeadlineExceeded, "request timed out")
	if !<-hadDeadline {
		t.Error("the handler's context had no deadline, want the Timeout's")
	}
}

// A call whose client goes away gives back what it held, whether it held a
// permit or was waiting for one.
func TestUnaryServerClientCancelReleases(t *testing.T) {
	t.Run("permit held", func(t *testing.T) {
		g := newGate()
		errs := make(chan error, 4)
		client := serve(t, &healthServer{check: g.check}, []grpc.ServerOption{grpc.ChainUnaryInterceptor(
			returns(errs),
			towergrpc.UnaryServerInterceptor(tower.Stack(
				loadshed.NewLayer[unaryCall, any](),
				limit.NewConcurrencyLayer[unaryCall, any](1),
			)),
		)})

		ctx, cancel := context.WithCancel(t.Context())
		first := make(chan error, 1)
		go func() {
			_, err := client.Check(ctx, &healthpb.HealthCheckRequest{Service: "first"})
			first <- err
		}()
		<-g.entered
		cancel()
		checkStatus(t, <-first, codes.Canceled, "context canceled")
		// The server's handler saw its context end and returned.
		checkStatus(t, <-errs, codes.Canceled, "context canceled")

		close(g.open)
		check(t, client, "second") // not shed: the permit was given back
	})

	t.Run("waiting in Ready", func(t *testing.T) {
		g := newGate()
		errs := make(chan error, 4)
		sem := limit.NewSemaphore(1)
		waiting := make(chan struct{}, 4)
		client := serve(t, &healthServer{check: g.check}, []grpc.ServerOption{grpc.ChainUnaryInterceptor(
			returns(errs),
			towergrpc.UnaryServerInterceptor(tower.Stack(
				hookReady[unaryCall, any](waiting),
				limit.NewSharedConcurrencyLayer[unaryCall, any](sem),
			)),
		)})

		first := make(chan error, 1)
		go func() {
			_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{Service: "first"})
			first <- err
		}()
		<-waiting
		<-g.entered

		ctx, cancel := context.WithCancel(t.Context())
		second := make(chan error, 1)
		go func() {
			_, err := client.Check(ctx, &healthpb.HealthCheckRequest{Service: "second"})
			second <- err
		}()
		<-waiting // the second call is on its way into the limit's Ready
		cancel()
		checkStatus(t, <-second, codes.Canceled, "context canceled")
		checkStatus(t, <-errs, codes.Canceled, "context canceled")
		if free, waiters := sem.Available(), sem.Waiting(); free != 0 || waiters != 0 {
			t.Fatalf("got %d free, %d waiting, want 0 and 0 (the first call holds the permit)", free, waiters)
		}

		close(g.open)
		if err := <-first; err != nil {
			t.Fatalf("first call: got %v, want nil", err)
		}
		if err := <-errs; err != nil {
			t.Fatalf("first call on the server: got %v, want nil", err)
		}
		if n := sem.Available(); n != 1 {
			t.Fatalf("got %d permits free, want 1", n)
		}
		select {
		case got := <-g.entered:
			t.Fatalf("got %q at the handler, want only first", got)
		default:
		}
	})
}

func TestUnaryServerErrors(t *testing.T) {
	stack := func(layers ...tower.Layer[unaryCall, any]) func() grpc.UnaryServerInterceptor {
		return func() grpc.UnaryServerInterceptor { return towergrpc.UnaryServerInterceptor(tower.Stack(layers...)) }
	}
	tests := []struct {
		name        string
		interceptor func() grpc.UnaryServerInterceptor
		handler     error
		code        codes.Code
		msg         string
	}{
		{"handler's plain error", stack(), errTest, codes.Unknown, "test error"},
		{"handler's status", stack(), status.Error(codes.NotFound, "no such service"), codes.NotFound, "no such service"},
		{"broken stack", stack(brokenLayer[unaryCall, any]()), nil, codes.Unavailable, "test error"},
		{"closed buffer", func() grpc.UnaryServerInterceptor {
			buf := buffer.NewLayer[unaryCall, any](1)
			i := towergrpc.UnaryServerInterceptor(buf)
			buf.Close()
			return i
		}, nil, codes.Unavailable, "buffer's worker closed unexpectedly"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reached := false
			h := &healthServer{check: func(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
				reached = true
				return nil, tt.handler
			}}
			client := serve(t, h, []grpc.ServerOption{grpc.UnaryInterceptor(tt.interceptor())})
			_, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{})
			checkStatus(t, err, tt.code, tt.msg)
			if want := tt.handler != nil; reached != want {
				t.Errorf("got handler reached %v, want %v", reached, want)
			}
		})
	}
}

// A stream holds its permit for its whole life: a limit of one admits one
// stream at a time, and readiness is decided before the handler starts.
func TestStreamServerHoldsPermitForStreamLife(t *testing.T) {
	g := newGate()
	errs := make(chan error, 4)
	client := serve(t, &healthServer{watch: g.watch}, []grpc.ServerOption{grpc.ChainStreamInterceptor(
		streamReturns(errs),
		towergrpc.StreamServerInterceptor(tower.Stack(
			loadshed.NewLayer[streamCall, struct{}](),
			limit.NewConcurrencyLayer[streamCall, struct{}](1),
		)),
	)})

	ctx, cancel := context.WithCancel(t.Context())
	first := watch(t, ctx, client, "first")
	<-g.entered

	second, err := client.Watch(t.Context(), &healthpb.HealthCheckRequest{Service: "second"})
	if err != nil {
		t.Fatalf("Watch: got %v, want nil", err)
	}
	_, err = second.Recv()
	checkStatus(t, err, codes.ResourceExhausted, "service overloaded")
	checkStatus(t, <-errs, codes.ResourceExhausted, "service overloaded")

	cancel()
	_, err = first.Recv()
	checkStatus(t, err, codes.Canceled, "context canceled")
	checkStatus(t, <-errs, codes.Canceled, "context canceled")

	third := watch(t, t.Context(), client, "third") // admitted: the first stream's permit is back
	if got := <-g.entered; got != "third" {
		t.Fatalf("got %q at the handler, want third (second never reached it)", got)
	}
	close(g.open)
	if _, err := third.Recv(); err != io.EOF {
		t.Fatalf("third stream: got %v, want io.EOF", err)
	}
}

func TestStreamServerTimeoutIsStreamContext(t *testing.T) {
	hadDeadline := make(chan bool, 1)
	h := &healthServer{watch: func(_ *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
		_, ok := stream.Context().Deadline()
		hadDeadline <- ok
		if err := stream.Send(serving); err != nil {
			return err
		}
		<-stream.Context().Done()
		return stream.Context().Err()
	}}
	client := serve(t, h, []grpc.ServerOption{grpc.StreamInterceptor(towergrpc.StreamServerInterceptor(
		timeout.NewLayer[streamCall, struct{}](10 * time.Millisecond),
	))})

	stream := watch(t, t.Context(), client, "")
	_, err := stream.Recv()
	checkStatus(t, err, codes.DeadlineExceeded, "request timed out")
	if !<-hadDeadline {
		t.Error("the stream's context had no deadline, want the Timeout's")
	}
}

// watch opens a Watch stream and receives its first message, SERVING.
func watch(t *testing.T, ctx context.Context, client healthpb.HealthClient, service string) healthpb.Health_WatchClient {
	t.Helper()
	stream, err := client.Watch(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		t.Fatalf("Watch(%q): got %v, want nil", service, err)
	}
	rsp, err := stream.Recv()
	if err != nil || rsp.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Watch(%q): got %v, %v, want SERVING", service, rsp, err)
	}
	return stream
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// hookReady returns a layer whose Ready tells ch, then asks the service
// inside it.
func hookReady[Req, Res any](ch chan<- struct{}) tower.Layer[Req, Res] {
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return hooked[Req, Res]{inner: inner, ch: ch}
	})
}

type hooked[Req, Res any] struct {
	inner tower.Service[Req, Res]
	ch    chan<- struct{}
}

func (h hooked[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	h.ch <- struct{}{}
	return h.inner.Ready(ctx)
}

// brokenLayer returns a layer whose service is broken: its Ready fails with
// errTest.
func brokenLayer[Req, Res any]() tower.Layer[Req, Res] {
	return tower.LayerFunc[Req, Res](func(tower.Service[Req, Res]) tower.Service[Req, Res] {
		return broken[Req, Res]{}
	})
}

type broken[Req, Res any] struct{}

func (broken[Req, Res]) Ready(context.Context) (tower.Permit[Req, Res], error) {
	return tower.Permit[Req, Res]{}, errTest
}
