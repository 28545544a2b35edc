package throttle_test

import (
	"context"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/throttle"
	"github.com/towergo/tower/towertest"
)

var sink int

// echo answers at once with its request.
var echo = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// refusing refuses every request at once, as an overloaded backend does.
var refusing = tower.ServiceFunc[int, int](func(context.Context, int) (int, error) { return 0, loadshed.ErrOverloaded })

// The bare service, for comparison.
func BenchmarkServiceFunc(b *testing.B) {
	towertest.Bench(b, echo, 1)
}

// A healthy backend: the probability is 0, nothing is drawn, and each
// request is counted as accepted.
func BenchmarkThrottle(b *testing.B) {
	towertest.Bench(b, throttle.New(echo, throttle.NotOverloaded[int]), 1)
}

func BenchmarkThrottleParallel(b *testing.B) {
	towertest.BenchParallel(b, throttle.New(echo, throttle.NotOverloaded[int]), 1)
}

// A backend that refuses everything: nine requests in ten are rejected at
// once (the default cap), the tenth is sent and refused.
func BenchmarkThrottleRejecting(b *testing.B) {
	svc := throttle.New(refusing, throttle.NotOverloaded[int])
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, _ := tower.Call(ctx, svc, 1)
		sink += res
	}
}

// Neither a request that goes through nor one that is rejected allocates.
func TestDoesNotAllocate(t *testing.T) {
	tests := []struct {
		name  string
		inner tower.Service[int, int]
	}{
		{"Accepted", echo},
		{"Refused", refusing}, // most rejected at once
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := throttle.New(tt.inner, throttle.NotOverloaded[int])
			ctx := context.Background()
			allocs := testing.AllocsPerRun(1000, func() {
				res, _ := tower.Call(ctx, svc, 1)
				sink += res
			})
			if allocs != 0 {
				t.Errorf("got %v allocations per request, want 0", allocs)
			}
		})
	}
}
