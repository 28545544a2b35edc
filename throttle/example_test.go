package throttle_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/towergo/tower"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/throttle"
)

// A backend that refuses every request: after the first refusals, the
// client rejects most requests itself, and the backend sees a tenth of
// them (the default cap on the rejection probability is 0.9). Once the
// backend accepts again, the accepts bring the probability down, until
// nothing is rejected. (Here all the requests come well within the window; in
// a client, the refusals also leave the window two minutes after they were
// counted.)
func Example() {
	down := true
	backend := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		if down {
			return "", loadshed.ErrOverloaded
		}
		return "hello " + req, nil
	})
	var counts metrics.Counts
	svc := throttle.New(backend, throttle.NotOverloaded,
		throttle.WithRand(rand.New(rand.NewPCG(1, 2))), // seeded, for an output that repeats
		throttle.WithMetrics(&counts))

	ctx := context.Background()
	sent := 0
	for range 1000 {
		_, err := tower.Call(ctx, svc, "world")
		if !errors.Is(err, throttle.ErrThrottled) {
			sent++
		}
	}
	fmt.Printf("down: %d sent, %d rejected locally, rejection probability %.2f\n",
		sent, counts.Get(metrics.Throttled), svc.RejectionProbability())

	// The backend is back: what is sent is accepted, and each accept
	// offsets K requests; the probability falls slowly while the refusals
	// are in the window, and then to 0.
	down = false
	sent = 0
	for range 1000 {
		if _, err := tower.Call(ctx, svc, "world"); err == nil {
			sent++
		}
	}
	fmt.Printf("up: %d sent, rejection probability %.2f\n", sent, svc.RejectionProbability())
	for range 20000 {
		tower.Call(ctx, svc, "world")
	}
	fmt.Printf("20000 later: rejection probability %.2f\n", svc.RejectionProbability())
	fmt.Println(tower.Call(ctx, svc, "world"))
	// Output:
	// down: 99 sent, 901 rejected locally, rejection probability 0.90
	// up: 110 sent, rejection probability 0.89
	// 20000 later: rejection probability 0.00
	// hello world <nil>
}
