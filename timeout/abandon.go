package timeout

import (
	"sync/atomic"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
)

// abandonedCall is the Where of the PanicError of an inner call that
// panicked, or called runtime.Goexit, in Abandon mode.
const abandonedCall = "the inner service's Call, on the goroutine of a Timeout's Abandon mode"

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
	res      Res
	err      error
	panicked bool // err is the PanicError of the inner call's panic or Goexit
}

// abandon runs the inner call on a goroutine of its own, with c as its
// context, and returns when the call does or when c ends (at the deadline,
// or when the caller gives up), whichever is first. The goroutine holds the inner permit, and so
// whatever was reserved below the Timeout, until the inner call returns.
func abandon[Req, Res any](c *call[Req, Res], inner tower.Permit[Req, Res], req Req) (Res, error) {
	var state atomic.Int32
	done := make(chan outcome[Res], 1)
	go run(c, inner, req, &state, done)

	select {
	case o := <-done:
		return c.settle(o)
	case <-c.Done():
	}
	// The deadline came, or the caller gave up first: either way the
	// caller is answered now, and the call goes on without it.
	if state.CompareAndSwap(running, left) {
		var zero Res
		return zero, c.expired()
	}
	return c.settle(<-done) // the call finished as c ended
}

// run is the abandoned call's goroutine. A panic in the inner call, or its
// runtime.Goexit, must not end the program: it becomes a PanicError, the
// caller's answer if the caller still waits, and otherwise is reported to
// guard.Orphan.
func run[Req, Res any](c *call[Req, Res], inner tower.Permit[Req, Res], req Req, state *atomic.Int32, done chan<- outcome[Res]) {
	var o outcome[Res]
	returned := false
	defer func() {
		// Ending c cancels it: the caller must hear the outcome first,
		// or it could take that cancellation for the deadline.
		defer c.end(c.left() <= 0)
		var perr *tower.PanicError
		if !returned {
			perr = guard.Recovered(abandonedCall, recover())
			o = outcome[Res]{err: perr, panicked: true}
		}
		if !state.CompareAndSwap(running, finished) {
			// The caller has had its answer, and nobody reads this one.
			if perr != nil {
				guard.Orphan(perr)
			}
			return
		}
		done <- o
	}()
	o.res, o.err = inner.Call(c, req)
	returned = true
}

// settle returns the caller's answer for the outcome o of the inner call.
// A panic reaches the caller whenever it is still there to hear of it. A
// response at the very instant of the deadline raced the timer on another
// goroutine: it counts as late.
func (c *call[Req, Res]) settle(o outcome[Res]) (Res, error) {
	if !o.panicked && c.left() <= 0 {
		var zero Res
		return zero, c.expired()
	}
	return o.res, o.err
}
