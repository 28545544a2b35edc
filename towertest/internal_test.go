package towertest

import (
	"testing"
	"testing/synctest"
)

// An injected panic value names where the suite injected it, for the
// failure messages that show it.
func TestInjectedString(t *testing.T) {
	if got, want := (&injected{"Call"}).String(), "towertest: injected panic in Call"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// capacity counts the reservations a service grants at once, up to 64,
// and gives them all back.
func TestCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := NewMock[string, string]()
		if got := capacity(mock); got != 64 {
			t.Errorf("capacity of a mock that allows all = %d, want 64", got)
		}
		h.Allow(3)
		if got := capacity(mock); got != 3 {
			t.Errorf("capacity of a mock that allows 3 = %d, want 3", got)
		}
		if got := capacity(mock); got != 3 {
			t.Errorf("capacity measured again = %d, want 3: the reservations must be given back", got)
		}
		if n := h.Outstanding(); n != 0 {
			t.Errorf("%d reservations outstanding after capacity, want 0", n)
		}
	})
}
