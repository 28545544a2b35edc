package towergrpc_test

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towergrpc"
)

// printRequests is a metrics.RequestSink that prints what it is told of
// each RPC, but its latency.
type printRequests struct{}

func (printRequests) ObserveRequest(r metrics.Request) {
	fmt.Printf("  %s %s: %v, %s\n", r.Protocol, r.Method, codes.Code(r.Status), r.Outcome)
}

// A server that reports each RPC: the one served, and the one shed while
// the first held the only place.
func ExampleWithServerMetrics() {
	h := newHeldHealth()
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(towergrpc.UnaryServerInterceptor(
		towergrpc.UnaryServerStack().LoadShed().ConcurrencyLimit(1),
		towergrpc.WithServerMetrics(printRequests{}),
	)))
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
	fmt.Println("second call:", status.Code(err))
	close(h.release)
	fmt.Println("first call:", <-first)
	// Output:
	//   grpc-server /grpc.health.v1.Health/Check: ResourceExhausted, shed
	// second call: ResourceExhausted
	//   grpc-server /grpc.health.v1.Health/Check: OK, served
	// first call: <nil>
}

// A client that reports each RPC it makes, with the code it got: a
// metrics.Counts keeps the outcomes.
func ExampleWithClientMetrics() {
	var counts metrics.Counts
	client, stop := serveHealth(grpc.NewServer(), newHeldHealth(),
		grpc.WithUnaryInterceptor(towergrpc.UnaryClientInterceptor(
			towergrpc.UnaryClientStack(),
			towergrpc.WithClientMetrics(&counts))))
	defer stop()

	ctx, cancel := context.WithCancel(context.Background())
	client.Check(ctx, &healthpb.HealthCheckRequest{})
	client.Check(ctx, &healthpb.HealthCheckRequest{})
	cancel()
	client.Check(ctx, &healthpb.HealthCheckRequest{})
	s := counts.Snapshot()
	fmt.Println("served:", s.Calls[metrics.OutcomeServed], "canceled:", s.Calls[metrics.OutcomeCanceled])
	// Output: served: 2 canceled: 1
}
