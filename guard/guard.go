// Package guard calls user code (a service's Ready, a metrics sink, an
// observer, a handler) from a middleware so that a panic in it breaks
// nothing it should not. Use [Call] on a goroutine the middleware
// started, where a panic would end the program: it comes back as a
// *tower.PanicError for the callers concerned, and [Orphan] logs one
// that no caller is left to hear of, as net/http logs a handler's panic.
// Use [Undo] on the caller's own goroutine, where the panic goes on up:
// it first gives back what the caller holds (a permit, a place in a
// queue). Every middleware of this repository calls user code this way.
//
// [IsNil] is for a constructor: it sees a typed nil (a nil pointer in an
// interface), which == nil does not, so that bad input fails at once.
//
// runtime.Goexit cannot be stopped: a goroutine whose code called it must
// see, in its own deferred function, that the code did not return, and
// fail with [Recovered]'s error.
package guard

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

// Undo calls f, user code run for its effect on the caller's goroutine (a
// metrics sink, an observer). If f panics or calls runtime.Goexit, it
// calls undo, which gives back what the caller holds for the request (a
// permit, a place in a queue), before the panic goes on up unrecovered,
// with f's value and stack.
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

// Each calls f with each element of s, every one of them even if f
// panics: the first panic goes on up once the rest are done.
func Each[T any](s []T, f func(T)) {
	i := 0
	defer func() {
		if i < len(s) {
			Each(s[i+1:], f) // f(s[i]) panicked
		}
	}()
	for ; i < len(s); i++ {
		f(s[i])
	}
}
