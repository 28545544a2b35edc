package hedge_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/stack"
)

// markHedge hedges every request, and marks the copy so that the example
// can tell the legs apart.
type markHedge struct{}

func (markHedge) Clone(req string) (string, bool) { return req + " (hedge)", true }
func (markHedge) CanRetry(string) bool            { return true }

// The original is stuck until it is cancelled; the hedge answers at once,
// wins, and the original is cancelled. With no latencies required
// (minDataPoints 0) and none recorded, the delay is 0: the hedge goes out
// at once.
func Example() {
	stuck := tower.ServiceFunc[string, string](func(ctx context.Context, req string) (string, error) {
		if strings.HasSuffix(req, "(hedge)") {
			return "answered " + req, nil
		}
		<-ctx.Done()
		fmt.Println("original:", ctx.Err())
		return "", ctx.Err()
	})
	svc := hedge.New[string, string](stuck, markHedge{}, 0, 0.9, time.Minute)

	res, err := tower.Call(context.Background(), svc, "hello")
	fmt.Println(res, err)
	// Output:
	// original: context canceled
	// answered hello (hedge) <nil>
}

// One budget for retries and hedges: together they add at most 10% of the
// requests, plus 10 per second.
func ExampleWithBudget() {
	upper := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		return strings.ToUpper(req), nil
	})
	budget := retry.NewTPSBudget(10*time.Second, 10, 0.1)
	svc := stack.New[string, string]().
		Layer(retry.NewLayer(retry.NewPolicy[string, string](retry.AnyError, retry.WithBudget(budget)))).
		Layer(hedge.NewLayer[string, string](hedge.Idempotent[string]{}, 100, 0.9, 10*time.Second, hedge.WithBudget(budget))).
		Service(upper)

	res, err := tower.Call(context.Background(), svc, "hello")
	fmt.Println(res, err)
	// Output:
	// HELLO <nil>
}
