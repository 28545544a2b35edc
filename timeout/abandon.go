package timeout

import (
	"runtime"
	"sync/atomic"

	"github.com/towergo/tower"
)

// The states of an abandoned call. It starts running; whichever of the
// inner call's goroutine and the caller moves it on first decides whether
// the caller reads the outcome (finished) or has gone (left).
const (
	running = iota
	finished
	left
)

// outcome is how the inner call ended.
type outcome[Res any] struct {
	res    Res
	err    error
	panic  any  // the value the inner call panicked with
	goexit bool // the inner call ended its goroutine with runtime.Goexit
}

// abandon runs the inner call on a goroutine of its own, with c as its
// context, and returns when the call does or when c ends, whichever comes
// first.
func abandon[Req, Res any](c *call[Req, Res], inner tower.Permit[Req, Res], req Req) (Res, error) {
	var state atomic.Int32
	done := make(chan outcome[Res], 1)
	go func() {
		var o outcome[Res]
		returned := false
		defer func() {
			// Ending c cancels it: the caller must hear the outcome first,
			// or it could take that cancellation for the deadline.
			defer c.end(c.left() <= 0)
			if !state.CompareAndSwap(running, finished) {
				// The caller has left and nobody reads the outcome. A panic
				// is not recovered: it goes on, with its own stack, and
				// crashes the program.
				return
			}
			if !returned {
				// recover returns nil only for runtime.Goexit: panic(nil)
				// recovers as a *runtime.PanicNilError.
				o.panic = recover()
				o.goexit = o.panic == nil
			}
			done <- o
		}()
		o.res, o.err = inner.Call(c, req)
		returned = true
	}()

	var o outcome[Res]
	select {
	case o = <-done:
	case <-c.Done():
		if state.CompareAndSwap(running, left) {
			var zero Res
			return zero, c.expired()
		}
		o = <-done // the call finished as c ended
	}
	switch {
	case o.panic != nil:
		panic(o.panic)
	case o.goexit:
		runtime.Goexit()
	case c.left() <= 0:
		// A response at the very instant of the deadline raced the timer
		// on another goroutine: it counts as late.
		var zero Res
		return zero, c.expired()
	}
	return o.res, o.err
}
