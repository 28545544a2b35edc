package mono_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/towergrpc/internal/mono"
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
