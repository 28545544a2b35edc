// Package guard calls user code (a service's Ready, a metrics sink, an
// observer) from a middleware so that a panic in it breaks nothing it
// should not. On a goroutine the middleware started, [Call] turns a panic
// into a *tower.PanicError for the callers concerned, and [Orphan] logs
// one that no caller is left to hear of. On the caller's goroutine,
// [Undo] gives back what the caller holds (a permit, a place in a queue)
// before the panic goes on up. runtime.Goexit cannot be stopped: a
// goroutine whose code called it must see, in its own deferred function,
// that the code did not return, and fail with [Recovered]'s error.
package guard

import (
	"errors"
	"log/slog"
	"runtime/debug"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
)

// Recovered returns the PanicError for v, what recover returned in the
// deferred function of code that did not return: v is nil if it called
// runtime.Goexit. Call it there, so that the stack it records is the panic's.
func Recovered(where string, v any) *tower.PanicError {
	if v == nil {
		v = errors.New("runtime.Goexit was called")
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

// Undo calls f on the caller's goroutine. If f panics or calls
// runtime.Goexit, Undo calls undo, then lets the panic go on up
// unrecovered, with f's value and stack.
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

// Orphan logs p, a panic that no caller is left to hear of (the caller of
// an abandoned call has had its answer), with its stack, to log/slog's
// default logger at level Error, as net/http logs a handler's panic. A nil
// p is no panic, and logs nothing: Orphan(Call(where, f)) runs f and logs
// a panic in it.
func Orphan(p *tower.PanicError) {
	if p == nil {
		return
	}
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

// IsNil reports whether v is a nil interface, or holds a nil pointer,
// channel, func or unsafe pointer (which == nil does not see), for a
// constructor to reject at once. A nil slice or map is a usable value.
func IsNil(v any) bool { return isnil.Is(v) }
