package towertest

import (
	"fmt"
	"testing"
)

// Panics fails t unless f panics with a value that prints as want (by
// fmt.Sprint), as a constructor given bad input must. It fails t too if f
// returns without panicking.
func Panics(t testing.TB, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		if got := fmt.Sprint(recover()); got != want {
			t.Errorf("got panic %q, want %q", got, want)
		}
	}()
	f()
}
