package stripe_test

import (
	"fmt"
	"sync"

	"github.com/towergo/tower/towerotel/internal/stripe"
)

func Example() {
	var inFlight stripe.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			inFlight.Add(1)
			defer inFlight.Add(-1)
		})
	}
	wg.Wait()
	fmt.Println(inFlight.Load())
	// Output: 0
}
