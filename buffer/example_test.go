package buffer_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/stack"
)

func Example() {
	upper := tower.ServiceFunc[string, string](func(_ context.Context, s string) (string, error) {
		return strings.ToUpper(s), nil
	})
	buf := buffer.New[string, string](upper, 8)
	defer buf.Close() // fails whatever is still queued

	res, err := tower.Call[string, string](context.Background(), buf, "hello")
	fmt.Println(res, err)

	buf.Close()
	_, err = tower.Call[string, string](context.Background(), buf, "hello")
	fmt.Println(err)
	// Output:
	// HELLO <nil>
	// buffer's worker closed unexpectedly
}

// A Buffer in front of a concurrency limit: callers do not wait in Ready,
// their requests wait in the Buffer's queue until the limit lets them
// through. The Layer closes every Buffer it made.
func ExampleNewLayer() {
	double := tower.ServiceFunc[int, int](func(_ context.Context, n int) (int, error) {
		return 2 * n, nil
	})
	buf := buffer.NewLayer[int, int](8)
	defer buf.Close()
	svc := stack.New[int, int]().
		Layer(buf). // outermost: sees each request first
		Layer(limit.NewConcurrencyLayer[int, int](1)).
		Service(double)

	results := make([]int, 3)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			results[i], _ = tower.Call(context.Background(), svc, i+1)
		})
	}
	wg.Wait()
	fmt.Println(results)
	// Output:
	// [2 4 6]
}

// broken is a service whose readiness check fails: it is broken for good.
type broken struct{}

func (broken) Ready(context.Context) (tower.Permit[string, string], error) {
	return tower.Permit[string, string]{}, errors.New("connection refused")
}

// When the inner service fails, every caller gets one *ServiceError, through
// which the inner service's error is reachable.
func ExampleServiceError() {
	buf := buffer.New[string, string](broken{}, 8)
	defer buf.Close()

	_, err := tower.Call[string, string](context.Background(), buf, "hello")
	var se *buffer.ServiceError
	fmt.Println(errors.As(err, &se))
	fmt.Println(err)
	fmt.Println(errors.Unwrap(err))
	// Output:
	// true
	// buffered service failed: connection refused
	// connection refused
}

// Shutdown closes a Buffer and waits until no request of its waits in the
// inner service's Ready, but no longer than its context allows.
func ExampleBuffer_Shutdown() {
	upper := tower.ServiceFunc[string, string](func(_ context.Context, s string) (string, error) {
		return strings.ToUpper(s), nil
	})
	buf := buffer.New[string, string](upper, 8)
	res, _ := tower.Call[string, string](context.Background(), buf, "hello")
	fmt.Println(res)

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	fmt.Println(buf.Shutdown(ctx))
	_, err := tower.Call[string, string](context.Background(), buf, "hello")
	fmt.Println(err)
	// Output:
	// HELLO
	// <nil>
	// buffer's worker closed unexpectedly
}
