// Package safe recovers the panics of user code that runs on goroutines
// this module starts, and turns them into *tower.PanicError. A panic on
// such a goroutine would otherwise end the program; the callers it
// concerns get the error instead, and one that no caller is left to hear
// of is logged, as net/http logs a handler's panic.
//
// A goroutine that must survive a panic in user code calls that code
// through [Call]. User code called on the caller's goroutine, whose panic
// goes on up to the caller, goes through [Undo], which gives back what the
// caller held first. runtime.Goexit cannot be stopped: the goroutine's own
// deferred function must see that its code did not return and turn
// [Recovered]'s error into its failure.
//
// It is a copy of the core module's internal/safe, kept in this module
// because a module imports no other module's internal packages: those
// change between the core's releases without notice, and an adapter
// released against one release of the core must build against the next.
package safe

import (
	"errors"
	"log/slog"
	"runtime/debug"

	"github.com/towergo/tower"
)

// errGoexit is the Value of a PanicError for code that called
// runtime.Goexit.
var errGoexit = errors.New("runtime.Goexit was called")

// Recovered returns the PanicError for v, what recover returned in a
// deferred function of a goroutine whose code did not return normally:
// v is nil when that code called runtime.Goexit. It must be called from
// that deferred function, so that the stack it records is the panic's.
func Recovered(where string, v any) *tower.PanicError {
	if v == nil {
		v = errGoexit
	}
	return &tower.PanicError{Where: where, Value: v, Stack: debug.Stack()}
}

// Call calls f and returns nil, or the PanicError of a panic in f. If f
// calls runtime.Goexit, Call does not return: the goroutine exits.
func Call(where string, f func()) (perr *tower.PanicError) {
	returned := false
	defer func() {
		if !returned {
			perr = Recovered(where, recover())
		}
	}()
	f()
	returned = true
	return nil
}

// Undo calls f, user code called for its effect on the caller's
// goroutine (a metrics sink, an observer), and, if f panics or calls
// runtime.Goexit, calls undo before the panic goes on up to the caller:
// undo gives back what the caller holds for the request f was told of (a
// permit, a place in a queue), so that a panic in user code reaches the
// caller and leaks nothing. The panic is not recovered: its value and
// stack stay f's.
func Undo(f, undo func()) {
	returned := false
	defer func() {
		if !returned {
			undo()
		}
	}()
	f()
	returned = true
}

// Orphan reports a panic that no caller is left to hear of (the caller of
// an abandoned call has had its answer), to log/slog's default logger at
// level Error, with the panic's stack: a program that sets no logger gets
// it on standard error, as net/http logs a handler's panic.
func Orphan(p *tower.PanicError) {
	slog.Error("tower: recovered a panic that no caller is left to hear of",
		"where", p.Where, "panic", p.Value, "stack", string(p.Stack))
}
