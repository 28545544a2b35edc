package towergrpc_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towergrpc"
)

// heldHealth is a health service whose Check of "hold" and whose Watch
// hold their caller until release is closed, or their context ends, once
// they have said so on held.
type heldHealth struct {
	healthpb.UnimplementedHealthServer
	held, release chan struct{}
}

func newHeldHealth() *heldHealth {
	return &heldHealth{held: make(chan struct{}, 1), release: make(chan struct{})}
}

func (h *heldHealth) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if req.Service == "hold" {
		if err := h.hold(ctx); err != nil {
			return nil, err
		}
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (h *heldHealth) Watch(_ *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	if err := stream.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}); err != nil {
		return err
	}
	return h.hold(stream.Context())
}

func (h *heldHealth) hold(ctx context.Context) error {
	h.held <- struct{}{}
	select {
	case <-h.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// serveHealth serves h with srv over an in-memory listener, and returns a
// client made with opts, and a function that stops both.
func serveHealth(srv *grpc.Server, h healthpb.HealthServer, opts ...grpc.DialOption) (healthpb.HealthClient, func()) {
	healthpb.RegisterHealthServer(srv, h)
	lis := bufconn.Listen(1 << 16)
	go srv.Serve(lis)
	opts = append(opts,
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	conn, err := grpc.NewClient("passthrough:///bufconn", opts...)
	if err != nil {
		panic(err)
	}
	return healthpb.NewHealthClient(conn), func() { conn.Close(); srv.Stop() }
}

// A server that sheds the calls it cannot take at once, and gives each a
// second: LoadShed > Timeout > ConcurrencyLimit(1), without a type
// argument.
func ExampleUnaryServerStack() {
	h := newHeldHealth()
	protect := towergrpc.UnaryServerStack().
		LoadShed().
		Timeout(time.Second).
		ConcurrencyLimit(1)
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(towergrpc.UnaryServerInterceptor(protect)))
	client, stop := serveHealth(srv, h)
	defer stop()

	ctx := context.Background()
	first := make(chan error)
	go func() {
		_, err := client.Check(ctx, &healthpb.HealthCheckRequest{Service: "hold"})
		first <- err
	}()
	<-h.held // the first call has the one place
	_, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
	fmt.Println("while the first call runs:", status.Code(err), status.Convert(err).Message())
	close(h.release)
	fmt.Println("the first call:", <-first)
	// Output:
	// while the first call runs: ResourceExhausted service overloaded
	// the first call: <nil>
}

// Unary calls and streams under one limit: the two stacks share one
// Semaphore, so an open stream takes the place a call would need.
func ExampleStreamServerStack() {
	h := newHeldHealth()
	sem := limit.NewSemaphore(1)
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(towergrpc.UnaryServerInterceptor(
			towergrpc.UnaryServerStack().LoadShed().SharedConcurrencyLimit(sem))),
		grpc.ChainStreamInterceptor(towergrpc.StreamServerInterceptor(
			towergrpc.StreamServerStack().SharedConcurrencyLimit(sem))),
	)
	client, stop := serveHealth(srv, h)
	defer stop()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := client.Watch(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		fmt.Println(err)
		return
	}
	<-h.held // the stream's handler runs, and holds the place
	_, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
	fmt.Println("Check while a Watch is open:", status.Code(err), status.Convert(err).Message())
	// Output: Check while a Watch is open: ResourceExhausted service overloaded
}

// A client that gives each call 50ms: the caller gets DeadlineExceeded,
// with the Timeout's message.
func ExampleUnaryClientStack() {
	h := newHeldHealth()
	client, stop := serveHealth(grpc.NewServer(), h,
		grpc.WithUnaryInterceptor(towergrpc.UnaryClientInterceptor(
			towergrpc.UnaryClientStack().Timeout(50*time.Millisecond))))
	defer stop()

	_, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{Service: "hold"})
	fmt.Println(status.Code(err), status.Convert(err).Message())
	// Output: DeadlineExceeded request timed out
}

// A client with one stream open at a time, that fails a second stream at
// once rather than wait for the first to end.
func ExampleStreamClientStack() {
	h := newHeldHealth()
	client, stop := serveHealth(grpc.NewServer(), h,
		grpc.WithStreamInterceptor(towergrpc.StreamClientInterceptor(
			towergrpc.StreamClientStack().LoadShed().ConcurrencyLimit(1))))
	defer stop()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first, err := client.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err == nil {
		_, err = first.Recv() // the stream is open
	}
	fmt.Println("first stream:", err)
	_, err = client.Watch(ctx, &healthpb.HealthCheckRequest{})
	fmt.Println("second stream:", status.Code(err), status.Convert(err).Message())
	// Output:
	// first stream: <nil>
	// second stream: ResourceExhausted service overloaded
}
