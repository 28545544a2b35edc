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

// The Buffer counts the requests queued in it. Here the inner
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

	held.Release() // the queued request gets the permit
	<-done
	// The request was counted out before its caller returned.
	b.Close()
	fmt.Println(c.Snapshot())
	// Output:
	// Queued=1
	// queued <nil>
	// {}
}
