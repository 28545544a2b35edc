package timeout_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/timeout"
)

// A handler that honours its context and would block until it is
// cancelled: the Timeout cancels it after 10ms and answers ErrElapsed.
func Example() {
	blocked := tower.ServiceFunc[string, string](func(ctx context.Context, _ string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	svc := timeout.New(blocked, 10*time.Millisecond)

	_, err := tower.Call(context.Background(), svc, "hello")
	fmt.Println(err)
	fmt.Println(errors.Is(err, timeout.ErrElapsed))
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	// Output:
	// request timed out
	// true
	// false
}

// A call answered in time passes through unchanged.
func Example_fastCall() {
	upper := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		return strings.ToUpper(req), nil
	})
	svc := timeout.New(upper, time.Second)

	res, err := tower.Call(context.Background(), svc, "hello")
	fmt.Println(res, err)
	// Output:
	// HELLO <nil>
}

// A caller deadline earlier than the Timeout's governs, and reaches the
// caller as its context's error, not as ErrElapsed.
func Example_callerDeadline() {
	blocked := tower.ServiceFunc[string, string](func(ctx context.Context, _ string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	svc := timeout.New(blocked, time.Hour)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := tower.Call(ctx, svc, "hello")
	fmt.Println(err)
	fmt.Println(errors.Is(err, timeout.ErrElapsed))
	// Output:
	// context deadline exceeded
	// false
}

// Abandon answers at the deadline even when the inner call ignores its
// context; the inner call finishes on its own goroutine, and its response
// is discarded.
func ExampleWithMode() {
	finished := make(chan string)
	stubborn := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		time.Sleep(50 * time.Millisecond) // does not look at its context
		finished <- "inner call returned"
		return req, nil
	})
	svc := timeout.New(stubborn, 10*time.Millisecond, timeout.WithMode(timeout.Abandon))

	res, err := tower.Call(context.Background(), svc, "hello")
	fmt.Printf("%q %v\n", res, err)
	fmt.Println(<-finished)
	// Output:
	// "" request timed out
	// inner call returned
}
