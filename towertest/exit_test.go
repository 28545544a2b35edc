package towertest_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towertest"
)

// Exit.Check accepts ExitValue from the Panic exit and an error that names
// runtime.Goexit from the Goexit exit, and reports anything else.
func TestExitCheck(t *testing.T) {
	panicExit, goexit := towertest.Exits[0], towertest.Exits[1]
	goexitValue := errors.New("the goroutine called runtime.Goexit")
	tests := []struct {
		name string
		e    towertest.Exit
		v    any
		want []string
	}{
		{"PanicValue", panicExit, towertest.ExitValue, nil},
		{"PanicOther", panicExit, "other", []string{`the PanicError's Value is other, want towertest: injected panic`}},
		{"GoexitError", goexit, goexitValue, nil},
		{"GoexitOtherError", goexit, towertest.ExitValue, []string{`the PanicError's Value is towertest: injected panic, want an error that says runtime.Goexit was called`}},
		{"GoexitNotAnError", goexit, "runtime.Goexit", []string{`the PanicError's Value is runtime.Goexit, want an error that says runtime.Goexit was called`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := failures(t, func(tb testing.TB) { tt.e.Check(tb, tt.v) }); !slices.Equal(got, tt.want) {
				t.Errorf("Check reported %q, want %q", got, tt.want)
			}
		})
	}
}

// ExpectPanicError returns the *tower.PanicError err wraps when it comes
// from where and has a stack, and reports any other error.
func TestExpectPanicError(t *testing.T) {
	pe := &tower.PanicError{Where: "Call", Value: "boom", Stack: []byte("goroutine 1")}
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"Match", fmt.Errorf("wrapped: %w", pe), nil},
		{"OtherWhere", &tower.PanicError{Where: "Ready", Stack: []byte("goroutine 1")},
			[]string{`got a PanicError from "Ready" with 11 bytes of stack, want one from "Call" with its stack`}},
		{"NoStack", &tower.PanicError{Where: "Call"},
			[]string{`got a PanicError from "Call" with 0 bytes of stack, want one from "Call" with its stack`}},
		{"NotAPanicError", errors.New("plain"), []string{`got error plain, want a *tower.PanicError`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *tower.PanicError
			reported := failures(t, func(tb testing.TB) { got = towertest.ExpectPanicError(tb, tt.err, "Call") })
			if !slices.Equal(reported, tt.want) {
				t.Errorf("ExpectPanicError reported %q, want %q", reported, tt.want)
			}
			if tt.name == "Match" && got != pe {
				t.Errorf("ExpectPanicError returned %v, want the PanicError the error wraps", got)
			}
		})
	}
}
