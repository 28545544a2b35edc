package guard_test

import (
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
