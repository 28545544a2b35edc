// Package safe recovers the panics of user code on goroutines this module
// starts, as *tower.PanicError: the callers concerned get the error, and
// one no caller is left to hear of is logged ([Orphan]), as net/http logs
// a handler's panic. Such a goroutine calls user code through [Call].
// runtime.Goexit cannot be stopped: the goroutine's own deferred function
// must see that its code did not return and fail with [Recovered]'s error.
//
// It is a copy of the core module's internal/safe: a module imports no
// other module's internal packages, which may change in any release.
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

// Orphan reports a panic that no caller is left to hear of (the caller of
// an abandoned call has had its answer), to log/slog's default logger at
// level Error, with the panic's stack: a program that sets no logger gets
// it on standard error, as net/http logs a handler's panic.
func Orphan(p *tower.PanicError) {
	slog.Error("tower: recovered a panic that no caller is left to hear of",
		"where", p.Where, "panic", p.Value, "stack", string(p.Stack))
}
