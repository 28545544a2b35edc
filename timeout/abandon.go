package timeout

import (
	"sync/atomic"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
)

// abandonedCall is the Where of the PanicError of an inner call that
// panicked, or called runtime.Goexit, in Abandon mode.
const abandonedCall = "the inner service's Call, on the goroutine of a Timeout's Abandon mode"

// The states of an abandoned call: whichever of the inner call's goroutine
// and the caller moves it on from running decides whether the caller reads
// the outcome (finished) or has gone (left).
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
// context, and returns when the call does or when c ends, whichever is
// first. The goroutine holds the inner permit until the call returns.
func abandon[Req, Res any](c *call[Req, Res], inner tower.Permit[Req, Res], req Req) (Res, error) {
	var state atomic.Int32
	done := make(chan outcome[Res], 1)
	go run(c, inner, req, &state, done)

	select {
	case o := <-done:
		return c.settle(o)
	case <-c.Done():
	}
	if state.CompareAndSwap(running, left) {
		var zero Res
		return zero, c.expired()
	}
	return c.settle(<-done) // the call finished as c ended
}

// run is the abandoned call's goroutine. A panic or runtime.Goexit in the
// inner call becomes a PanicError: the caller's answer if it still waits,
// and otherwise reported to guard.Orphan.
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
		if !state.CompareAndSwap(running, finished) { // the caller has gone
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

// settle returns the caller's answer for the outcome o of the inner call:
// a panic whenever there was one, and otherwise a late response's error. A
// response at the very instant of the deadline raced the timer, and is
// late.
func (c *call[Req, Res]) settle(o outcome[Res]) (Res, error) {
	if !o.panicked && c.left() <= 0 {
		var zero Res
		return zero, c.expired()
	}
	return o.res, o.err
}
