package guard_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
)

// A middleware's worker goroutine calls an observer the user gave: the
// observer's panic comes back as an error instead of ending the program.
func Example() {
	observe := func(n int) {
		if n > 1 {
			panic("observer: too many")
		}
	}
	done := make(chan error)
	go func() {
		for n := range 3 {
			if perr := guard.Call("the observer, on a worker", func() { observe(n) }); perr != nil {
				done <- perr
				return
			}
		}
		done <- nil
	}()
	err := <-done
	var perr *tower.PanicError
	fmt.Println(errors.As(err, &perr), perr.Where)
	fmt.Println(err)
	// Output:
	// true the observer, on a worker
	// tower: panic in the observer, on a worker: observer: too many
}

// A panic in user code on the caller's goroutine goes on up, but the
// permit the caller held is given back first.
func ExampleUndo() {
	held := 1
	release := func() { held--; fmt.Println("released; held", held) }
	func() {
		defer func() { fmt.Println("recovered:", recover()) }()
		guard.Undo(func() { panic("sink") }, release)
	}()
	// Output:
	// released; held 0
	// recovered: sink
}

type conn struct{}

func (*conn) Ready(context.Context) (tower.Permit[int, int], error) {
	return tower.Permit[int, int]{}, nil
}

// A constructor rejects a typed nil service, which == nil does not see.
func ExampleIsNil() {
	var c *conn
	var svc tower.Service[int, int] = c
	//lint:ignore SA4023 the example shows that this comparison is false: that is why IsNil exists.
	fmt.Println(svc == nil, guard.IsNil(svc))
	// Output: false true
}
