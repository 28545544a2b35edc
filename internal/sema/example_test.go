package sema_test

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/towergo/tower/internal/sema"
	"github.com/towergo/tower/metrics"
)

// A unit given back goes to the oldest waiter; with none, it is free again.
func Example() {
	s := sema.New(1)
	fmt.Println(s.TryAcquire(), s.TryAcquire())
	s.Release()
	fmt.Println(s.Available())

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fmt.Println(s.Acquire(ctx)) // a free unit is taken even with a done ctx
	fmt.Println(s.Acquire(ctx)) // none free: ctx.Err()
	// Output:
	// true false
	// 1
	// <nil>
	// context canceled
}

// printer is a sink that prints what it hears.
type printer struct{}

func (printer) Add(k metrics.Kind, delta int64)        { fmt.Printf("%v %+d\n", k, delta) }
func (printer) Observe(time.Duration, metrics.Outcome) {}

// A sink hears of a caller as Waiting only while it waits in line: not of
// one that finds a unit free.
func ExampleSema_AcquireWatched() {
	s := sema.New(1)
	ctx := context.Background()
	s.AcquireWatched(ctx, printer{}) // free: not told
	done := make(chan error)
	go func() { done <- s.AcquireWatched(ctx, printer{}) }()
	for s.Waiting() == 0 {
		runtime.Gosched()
	}
	s.Release()
	fmt.Println(<-done)
	// Output:
	// Waiting +1
	// Waiting -1
	// <nil>
}
