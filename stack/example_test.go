package stack_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/stack"
)

// A client of a string service, Timeout > Retry > ConcurrencyLimit >
// RateLimit, with one list of type arguments: the Timeout bounds every
// attempt together, and each attempt waits for a permit and a place in
// the window. The service fails its first call, and the retry answers.
// TestExampleTypeArguments holds this function to its one list.
func Example() {
	calls := 0
	svc := stack.New[string, string]().
		Timeout(time.Second).
		Retry(retry.AnyError, retry.WithMaxAttempts(3)).
		ConcurrencyLimit(10).
		RateLimit(100, time.Second).
		ServiceFunc(func(_ context.Context, name string) (string, error) {
			calls++
			if calls == 1 {
				return "", errors.New("connection reset")
			}
			return "hello, " + name, nil
		})

	rsp, err := tower.Call(context.Background(), svc, "gopher")
	fmt.Println(rsp, err, "after", calls, "calls")
	// Output: hello, gopher <nil> after 2 calls
}
