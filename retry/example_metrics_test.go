package retry_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/retry"
)

// The Retry counts the retries it sends, not the first attempts.
func ExampleWithMetrics() {
	var c metrics.Counts
	failures := 2
	flaky := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		if failures > 0 {
			failures--
			return "", errors.New("try again")
		}
		return "ok " + req, nil
	})
	retryErrors := retry.NewPolicy[string, string](func(_ string, err error) bool { return err != nil })
	svc := retry.New[string, string](flaky, retryErrors, retry.WithMetrics(&c))

	fmt.Println(tower.Call(context.Background(), svc, "a"))
	fmt.Println(tower.Call(context.Background(), svc, "b"))
	fmt.Println(c.Snapshot())
	// Output:
	// ok a <nil>
	// ok b <nil>
	// Retried=2
}
