package hedge_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/metrics"
)

// The Hedge counts the hedges it sends. Here the delay is 0 (no latencies
// required, none recorded): the hedge goes out at once and wins.
func ExampleWithMetrics() {
	var c metrics.Counts
	stuck := tower.ServiceFunc[string, string](func(ctx context.Context, req string) (string, error) {
		if strings.HasSuffix(req, "(hedge)") {
			return "answered " + req, nil
		}
		<-ctx.Done()
		return "", ctx.Err()
	})
	svc := hedge.New[string, string](stuck, markHedge{}, 0, 0.9, time.Minute, hedge.WithMetrics(&c))

	res, err := tower.Call(context.Background(), svc, "hello")
	fmt.Println(res, err)
	fmt.Println(c.Snapshot())
	// Output:
	// answered hello (hedge) <nil>
	// Hedged=1
}
