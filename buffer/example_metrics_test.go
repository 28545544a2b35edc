package buffer_test

import (
	"context"
	"fmt"
	"runtime"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
)

// The Buffer counts the requests queued for its worker. Here the inner
// limit's only permit is held, so a call queues until it is given back.
func ExampleWithMetrics() {
	var c metrics.Counts
	echo := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		return req, nil
	})
	inner := limit.NewConcurrency[string, string](echo, 1)
	b := buffer.New[string, string](inner, 8, buffer.WithMetrics(&c))
	ctx := context.Background()

	held, _ := inner.Ready(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err := tower.Call[string, string](ctx, b, "queued")
		fmt.Println(res, err)
	}()
	for c.Get(metrics.Queued) == 0 {
		runtime.Gosched()
	}
	fmt.Println(c.Snapshot())

	held.Release() // the worker gets the permit and hands it over
	<-done
	// The worker counts the request out once it has handed the permit
	// over, which the caller may see first; Close waits for the worker.
	b.Close()
	fmt.Println(c.Snapshot())
	// Output:
	// Queued=1
	// queued <nil>
	// {}
}
