package sema_test

import (
	"context"
	"fmt"

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
