package towergrpc_test

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/towergrpc"
)

// A server protected with no number to tune: an adaptive limit, which
// moves with the handlers' latency and drops, under a LoadShed, which
// answers ResourceExhausted at once for what the limit cannot take; and
// each RPC's priority from metadata its own callers send. Near the limit,
// low priority is shed first, and critical still gets in.
//
// The limiter's first window is a probe: a quarter of the limit, 5, until
// as many calls as normal priority may have in flight in it (4: it keeps
// 1 for critical calls) have timed the handler's no-load latency. Here
// four calls end it; then 18 held calls fill the limit's room for normal
// ones (it is 20 and keeps 2 for critical calls and 2 more from low
// ones): a low call is shed, and a critical one is served.
func Example_adaptiveServer() {
	h := &heldHealth{held: make(chan struct{}, 18), release: make(chan struct{})}
	protect := towergrpc.UnaryServerStack().LoadShed().AdaptiveLimit(adaptive.Gradient2())
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(towergrpc.UnaryServerInterceptor(
		protect, towergrpc.WithPriority(towergrpc.PriorityMetadata("x-priority")))))
	client, stop := serveHealth(srv, h)
	defer stop()

	for range 4 {
		if _, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
			fmt.Println("probe:", status.Code(err))
		}
	}
	var held sync.WaitGroup
	shed := make(chan error, 18)
	for range 18 {
		held.Go(func() {
			if _, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{Service: "hold"}); err != nil {
				shed <- err
			}
		})
	}
	for range 18 {
		select {
		case <-h.held:
		case err := <-shed: // not held: the example's premise is wrong
			fmt.Println("held:", status.Code(err))
		}
	}
	for _, priority := range []string{"low", "critical"} {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "x-priority", priority)
		_, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
		fmt.Println(priority+":", status.Code(err))
	}
	close(h.release)
	held.Wait()
	// Output:
	// low: ResourceExhausted
	// critical: OK
}
