package towergrpc_test

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towergrpc"
	"github.com/towergo/tower/towertest"
)

// PriorityMetadata reads the key in any case of its value; a missing or
// unknown value is normal.
func TestPriorityMetadata(t *testing.T) {
	f := towergrpc.PriorityMetadata("x-priority")
	for _, tt := range []struct {
		values []string
		want   tower.Priority
	}{
		{nil, tower.PriorityNormal},
		{[]string{"low"}, tower.PriorityLow},
		{[]string{"CRITICAL"}, tower.PriorityCritical},
		{[]string{"urgent"}, tower.PriorityNormal},
		{[]string{"low", "critical"}, tower.PriorityLow},
	} {
		md := metadata.MD{}
		for _, v := range tt.values {
			md.Append("x-priority", v)
		}
		ctx := metadata.NewIncomingContext(context.Background(), md)
		if got := f(ctx, "/m"); got != tt.want {
			t.Errorf("metadata %q: got %v, want %v", tt.values, got, tt.want)
		}
	}
}

// The priority reaches the stack's Ready and the handler's context, in a
// unary RPC and in a stream; f sees the full method.
func TestWithPriorityReachesStackAndHandler(t *testing.T) {
	var ready, handler []tower.Priority
	var methods []string
	watch := func(inner tower.Service[towergrpc.UnaryServerCall, any]) tower.Service[towergrpc.UnaryServerCall, any] {
		return unaryReadyHook{inner, func(p tower.Priority) { ready = append(ready, p) }}
	}
	watchStream := func(inner tower.Service[towergrpc.StreamServerCall, struct{}]) tower.Service[towergrpc.StreamServerCall, struct{}] {
		return streamReadyHook{inner, func(p tower.Priority) { ready = append(ready, p) }}
	}
	byMetadata := towergrpc.PriorityMetadata("x-priority")
	prio := towergrpc.WithPriority(func(ctx context.Context, method string) tower.Priority {
		methods = append(methods, method)
		return byMetadata(ctx, method)
	})
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(towergrpc.UnaryServerInterceptor(tower.LayerFunc[towergrpc.UnaryServerCall, any](watch), prio)),
		grpc.ChainStreamInterceptor(towergrpc.StreamServerInterceptor(tower.LayerFunc[towergrpc.StreamServerCall, struct{}](watchStream), prio)))
	client, stop := serveHealth(srv, priorityHealth{saw: &handler})
	defer stop()

	low := metadata.AppendToOutgoingContext(t.Context(), "x-priority", "low")
	if _, err := client.Check(low, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Check(t.Context(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	critical := metadata.AppendToOutgoingContext(t.Context(), "x-priority", "critical")
	stream, err := client.Watch(critical, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	want := []tower.Priority{tower.PriorityLow, tower.PriorityNormal, tower.PriorityCritical}
	if !slices.Equal(ready, want) || !slices.Equal(handler, want) {
		t.Errorf("Ready saw %v, the handlers %v; want %v for both", ready, handler, want)
	}
	wantMethods := []string{"/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch"}
	if !slices.Equal(methods, wantMethods) {
		t.Errorf("f saw methods %v, want %v", methods, wantMethods)
	}
}

func TestWithPriorityPanics(t *testing.T) {
	towertest.Panics(t, "towergrpc.WithPriority: nil function", func() { towergrpc.WithPriority(nil) })
	towertest.Panics(t, "towergrpc.PriorityMetadata: empty key", func() { towergrpc.PriorityMetadata("") })
}

// priorityHealth records the priority each handler's context carries.
type priorityHealth struct {
	healthpb.UnimplementedHealthServer
	saw *[]tower.Priority
}

func (h priorityHealth) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	*h.saw = append(*h.saw, tower.PriorityFrom(ctx))
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (h priorityHealth) Watch(_ *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	*h.saw = append(*h.saw, tower.PriorityFrom(stream.Context()))
	return stream.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
}

// unaryReadyHook and streamReadyHook tell saw the priority of each
// Ready's context.
type unaryReadyHook struct {
	inner tower.Service[towergrpc.UnaryServerCall, any]
	saw   func(tower.Priority)
}

func (s unaryReadyHook) Ready(ctx context.Context) (tower.Permit[towergrpc.UnaryServerCall, any], error) {
	s.saw(tower.PriorityFrom(ctx))
	return s.inner.Ready(ctx)
}

type streamReadyHook struct {
	inner tower.Service[towergrpc.StreamServerCall, struct{}]
	saw   func(tower.Priority)
}

func (s streamReadyHook) Ready(ctx context.Context) (tower.Permit[towergrpc.StreamServerCall, struct{}], error) {
	s.saw(tower.PriorityFrom(ctx))
	return s.inner.Ready(ctx)
}
