package sema_test

import (
	"context"
	"fmt"
	"runtime"

	"github.com/towergo/tower/internal/sema"
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

// printer is a Watcher that prints what it hears.
type printer struct{}

func (printer) Waiting(delta int64) { fmt.Printf("waiting %+d\n", delta) }

// A Watcher hears of a caller only while it waits in line: not of one that
// finds a unit free.
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
	// waiting +1
	// waiting -1
	// <nil>
}
