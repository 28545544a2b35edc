package timeout_test

import (
	"context"
	"fmt"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/timeout"
)

// The Timeout counts the calls it ends with ErrElapsed.
func ExampleWithMetrics() {
	var c metrics.Counts
	inner := tower.ServiceFunc[string, string](func(ctx context.Context, req string) (string, error) {
		if req == "slow" {
			<-ctx.Done() // never answers on its own
			return "", ctx.Err()
		}
		return req, nil
	})
	svc := timeout.New[string, string](inner, 10*time.Millisecond, timeout.WithMetrics(&c))

	for _, req := range []string{"fast", "slow", "fast"} {
		res, err := tower.Call(context.Background(), svc, req)
		fmt.Printf("%q %v\n", res, err)
	}
	fmt.Println(c.Snapshot())
	// Output:
	// "fast" <nil>
	// "" request timed out
	// "fast" <nil>
	// TimedOut=1
}
