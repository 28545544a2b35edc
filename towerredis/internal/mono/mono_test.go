package mono_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/towerredis/internal/mono"
)

// Differences of readings follow synctest's fake clock exactly, although
// the base was taken outside the bubble.
func TestNowInBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := mono.Now()
		time.Sleep(150 * time.Millisecond)
		if d := mono.Now() - start; d != 150*time.Millisecond {
			t.Errorf("got %v, want 150ms", d)
		}
	})
}

func BenchmarkNow(b *testing.B) {
	var d time.Duration
	for b.Loop() {
		d = mono.Now()
	}
	_ = d
}

// A deadline made from the monotonic clock converts to Now's scale; a
// wall-clock time does not. In a synctest bubble time.Now carries no
// monotonic reading, so nothing converts there.
func TestOf(t *testing.T) {
	before := mono.Now()
	d := time.Now()
	after := mono.Now()
	m, ok := mono.Of(d)
	if !ok {
		t.Fatal("Of(time.Now()): got false, want its reading")
	}
	if m < before || m > after {
		t.Errorf("got %v, want a reading between %v and %v, taken around it", m, before, after)
	}
	if later, _ := mono.Of(d.Add(250 * time.Millisecond)); later-m != 250*time.Millisecond {
		t.Errorf("Of(d + 250ms) - Of(d) = %v, want 250ms", later-m)
	}
	if _, ok := mono.Of(d.Round(0)); ok {
		t.Error("Of(a wall-clock time): got true, want false")
	}
	if _, ok := mono.Of(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)); ok {
		t.Error("Of(a date): got true, want false")
	}
	synctest.Test(t, func(t *testing.T) {
		if _, ok := mono.Of(time.Now().Add(250 * time.Millisecond)); ok {
			t.Error("in a bubble: got true, want false")
		}
	})
}
