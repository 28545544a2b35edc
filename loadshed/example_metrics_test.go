package loadshed_test

import (
	"context"
	"fmt"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/stack"
)

// The LoadShed counts the requests it turns away.
func ExampleWithMetrics() {
	var c metrics.Counts
	echo := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		return req, nil
	})
	svc := stack.New[string, string]().
		Layer(loadshed.NewLayer[string, string](loadshed.WithMetrics(&c))). // LoadShed > ConcurrencyLimit(1)
		Layer(limit.NewConcurrencyLayer[string, string](1)).
		Service(echo)

	ctx := context.Background()
	held, _ := svc.Ready(ctx) // the limit's only permit
	for _, req := range []string{"a", "b"} {
		_, err := tower.Call(ctx, svc, req)
		fmt.Println(req, err)
	}
	held.Release()
	fmt.Println(tower.Call(ctx, svc, "c"))
	fmt.Println(c.Snapshot())
	// Output:
	// a service overloaded
	// b service overloaded
	// c <nil>
	// Shed=2
}
