// A user's program of towergrpc: a unary server interceptor with a
// concurrency limit of 1 and a load shedder, called in the middle of a
// call, so that the second is shed as RESOURCE_EXHAUSTED.
package main

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/towergo/tower/towergrpc"
)

func main() {
	icpt := towergrpc.UnaryServerInterceptor(towergrpc.UnaryServerStack().LoadShed().ConcurrencyLimit(1))
	info := &grpc.UnaryServerInfo{FullMethod: "/usercheck.Service/Method"}
	res, err := icpt(context.Background(), "a", info, func(ctx context.Context, req any) (any, error) {
		_, err := icpt(ctx, "b", info, func(context.Context, any) (any, error) { return "served b", nil })
		fmt.Println("b:", status.Code(err))
		return "served " + req.(string), nil
	})
	fmt.Println("a:", res, err)
}
