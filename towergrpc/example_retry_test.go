package towergrpc_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towergrpc"
)

// flakyHealth answers UNAVAILABLE to its first Check, then SERVING.
type flakyHealth struct {
	healthpb.UnimplementedHealthServer
	calls atomic.Int32
}

func (h *flakyHealth) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if h.calls.Add(1) == 1 {
		return nil, status.Error(codes.Unavailable, "restarting")
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

// A client that retries with the ready-made policy. Health checks are
// reads, so the client says that the Health service's methods are
// idempotent, and their UNAVAILABLE is retried.
func ExampleNewRetryPolicy() {
	policy := towergrpc.NewRetryPolicy(
		retry.WithMaxAttempts(3),
		retry.WithBackoff(retry.NewFullJitterBackoff(10*time.Millisecond, time.Second)),
	).WithIdempotent(func(method string) bool {
		return strings.HasPrefix(method, "/grpc.health.v1.Health/")
	})
	stack := towergrpc.UnaryClientStack().RetryPolicy(policy)

	h := &flakyHealth{}
	client, stop := serveHealth(grpc.NewServer(), h,
		grpc.WithChainUnaryInterceptor(towergrpc.UnaryClientInterceptor(stack)))
	defer stop()

	rsp, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{})
	fmt.Println(rsp.GetStatus(), err, "after", h.calls.Load(), "attempts")
	// Output: SERVING <nil> after 2 attempts
}
