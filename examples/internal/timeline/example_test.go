package timeline_test

import (
	"context"
	"fmt"
	"time"

	"github.com/towergo/tower/examples/internal/timeline"
)

// Times print in milliseconds, rounded to the nearest 10ms.
func ExampleSince() {
	fmt.Println(timeline.Since(time.Now().Add(-104 * time.Millisecond)))
	// Output: 100
}

// Work gives up as soon as its context ends, with the context's error.
func ExampleWork() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fmt.Println(timeline.Work(ctx, time.Hour))
	// Output: context canceled
}
