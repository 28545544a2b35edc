package towergrpc_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towergrpc"
)

// slowHealth is a health service whose check of "slow" waits until release
// is closed, or its context ends.
type slowHealth struct {
	healthpb.UnimplementedHealthServer
	entered chan struct{}
	release chan struct{}
}

func (h *slowHealth) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if req.Service == "slow" {
		h.entered <- struct{}{}
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

// start serves h with srv on an in-memory listener, and returns a client
// connection to it made with opts.
func start(srv *grpc.Server, h healthpb.HealthServer, opts ...grpc.DialOption) *grpc.ClientConn {
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
	return conn
}

// A server that takes one call at a time and sheds the calls it cannot
// take at once: a call that arrives while another is in its handler fails
// at once with ResourceExhausted, and never reaches the handler.
func Example() {
	h := &slowHealth{entered: make(chan struct{}), release: make(chan struct{})}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(
		towergrpc.UnaryServerInterceptor(
			towergrpc.UnaryServerStack().LoadShed().ConcurrencyLimit(1),
		),
	))
	defer srv.Stop()
	conn := start(srv, h)
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	ctx := context.Background()

	first := make(chan error)
	go func() {
		_, err := client.Check(ctx, &healthpb.HealthCheckRequest{Service: "slow"})
		first <- err
	}()
	<-h.entered // the first call holds the server's one permit

	_, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
	fmt.Println("while the first call runs:", status.Code(err), status.Convert(err).Message())

	close(h.release)
	fmt.Println("first call:", <-first)
	rsp, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
	fmt.Println("after it:", rsp.GetStatus(), err)
	// Output:
	// while the first call runs: ResourceExhausted service overloaded
	// first call: <nil>
	// after it: SERVING <nil>
}

// A client that gives each call 50ms: the caller gets DeadlineExceeded,
// and the tower error under it.
func ExampleUnaryClientInterceptor() {
	h := &slowHealth{entered: make(chan struct{}, 1), release: make(chan struct{})}
	srv := grpc.NewServer()
	defer srv.Stop()
	conn := start(srv, h, grpc.WithUnaryInterceptor(towergrpc.UnaryClientInterceptor(
		timeout.NewLayer[towergrpc.UnaryClientCall, struct{}](50*time.Millisecond),
	)))
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)

	_, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{Service: "slow"})
	fmt.Println(status.Code(err), status.Convert(err).Message())
	fmt.Println("is ErrElapsed:", errors.Is(err, timeout.ErrElapsed))
	// Output:
	// DeadlineExceeded request timed out
	// is ErrElapsed: true
}
