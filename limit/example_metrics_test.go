package limit_test

import (
	"context"
	"fmt"
	"runtime"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
)

// The limit counts the requests it lets in and the callers waiting for a
// permit.
func ExampleWithMetrics() {
	var c metrics.Counts
	echo := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		return req, nil
	})
	svc := limit.NewConcurrency[string, string](echo, 2, limit.WithMetrics(&c))
	ctx := context.Background()

	p1, _ := svc.Ready(ctx)
	p2, _ := svc.Ready(ctx)
	fmt.Println(c.Snapshot())

	done := make(chan struct{})
	go func() {
		defer close(done)
		tower.Call(ctx, svc, "third") // waits for a permit
	}()
	for c.Get(metrics.Waiting) == 0 { // the count printed next
		runtime.Gosched()
	}
	fmt.Println(c.Snapshot())

	p1.Call(ctx, "first") // its permit goes to the third caller
	<-done
	p2.Release()
	fmt.Println(c.Snapshot())
	// Output:
	// InFlight=2
	// InFlight=2 Waiting=1
	// {}
}
