package towertest

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/towergo/tower"
)

// An Exit is a way for user code to end without returning, for tests that
// inject one into the code a middleware runs and check what becomes of it.
type Exit struct {
	// Name is "Panic" or "Goexit", for subtests.
	Name string
	// Do ends the code that calls it: it panics with ExitValue, or calls
	// runtime.Goexit.
	Do func()
}

// ExitValue is what the Panic of Exits panics with.
//
//lint:ignore ST1012 a panic value, never returned: ErrFoo would read as an error to check with errors.Is.
var ExitValue = errors.New("towertest: injected panic")

// Exits are the two ways user code ends without returning: a panic, and
// runtime.Goexit, which no recover stops.
var Exits = []Exit{
	{"Panic", func() { panic(ExitValue) }},
	{"Goexit", runtime.Goexit},
}

// Check fails t unless v, the Value of a *tower.PanicError, is what e
// makes: ExitValue for a panic, or an error that says runtime.Goexit was
// called.
func (e Exit) Check(t testing.TB, v any) {
	t.Helper()
	if e.Name == "Panic" {
		if v != any(ExitValue) {
			t.Errorf("the PanicError's Value is %v, want %v", v, ExitValue)
		}
		return
	}
	if err, ok := v.(error); !ok || !strings.Contains(err.Error(), "runtime.Goexit") {
		t.Errorf("the PanicError's Value is %v, want an error that says runtime.Goexit was called", v)
	}
}

// ExpectPanicError fails t unless err is, or wraps, a *tower.PanicError
// from where, with a stack, and returns it.
func ExpectPanicError(t testing.TB, err error, where string) *tower.PanicError {
	t.Helper()
	var pe *tower.PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("got error %v, want a *tower.PanicError", err)
	}
	if pe.Where != where || len(pe.Stack) == 0 {
		t.Errorf("got a PanicError from %q with %d bytes of stack, want one from %q with its stack", pe.Where, len(pe.Stack), where)
	}
	return pe
}
