package towergrpc_test

import (
	"context"
	"fmt"
	"sync/atomic"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/towergo/tower/towergrpc"
)

// busyError is the error of a program's own: a request refused because a
// backend it needs is busy. Its Overloaded method says what kind of
// failure it is, which is all towergrpc asks of an error.
type busyError struct{ backend string }

func (e busyError) Error() string    { return e.backend + " is busy" }
func (e busyError) Overloaded() bool { return true }

// An error of one's own that says Overloaded() true is answered as a shed
// request is, with codes.ResourceExhausted and its message, and reported
// as shed: the interceptor needs no import of the package that made it.
func Example_overloaded() {
	var dbBusy atomic.Bool
	protect := towergrpc.UnaryServerStack().Filter(func(c towergrpc.UnaryServerCall) (towergrpc.UnaryServerCall, error) {
		if dbBusy.Load() {
			return c, busyError{"the database"}
		}
		return c, nil
	})
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(towergrpc.UnaryServerInterceptor(
		protect, towergrpc.WithServerMetrics(printRequests{}))))
	client, stop := serveHealth(srv, newHeldHealth())
	defer stop()

	ctx := context.Background()
	_, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
	fmt.Println("database free:", status.Code(err))
	dbBusy.Store(true)
	_, err = client.Check(ctx, &healthpb.HealthCheckRequest{})
	fmt.Println("database busy:", status.Code(err), status.Convert(err).Message())
	// Output:
	//   grpc-server /grpc.health.v1.Health/Check: OK, served
	// database free: OK
	//   grpc-server /grpc.health.v1.Health/Check: ResourceExhausted, shed
	// database busy: ResourceExhausted the database is busy
}
