package loadshed_test

import (
	"context"
	"fmt"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/stack"
)

// LoadShed > ConcurrencyLimit(1): while one request holds the only permit,
// the next is shed at once instead of waiting for it.
func Example() {
	echo := tower.ServiceFunc[string, string](func(_ context.Context, s string) (string, error) {
		return s, nil
	})
	svc := stack.New[string, string]().
		Layer(loadshed.NewLayer[string, string]()). // outermost
		Layer(limit.NewConcurrencyLayer[string, string](1)).
		Service(echo)
	ctx := context.Background()

	first, _ := svc.Ready(ctx) // holds the limit's only permit
	res, err := tower.Call(ctx, svc, "second")
	fmt.Printf("second: %q, %v\n", res, err)

	res, err = first.Call(ctx, "first") // gives the permit back when done
	fmt.Printf("first: %q, %v\n", res, err)

	res, err = tower.Call(ctx, svc, "third")
	fmt.Printf("third: %q, %v\n", res, err)
	// Output:
	// second: "", service overloaded
	// first: "first", <nil>
	// third: "third", <nil>
}
