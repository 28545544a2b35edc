package stripe

import (
	"sync"
	"testing"
)

func TestInt64CountsEveryAdd(t *testing.T) {
	var c Int64
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			for range 1000 {
				c.Add(int64(g))
				c.Add(-1)
			}
		})
	}
	wg.Wait()
	want := int64(0)
	for g := range 32 {
		want += 1000 * int64(g-1)
	}
	if got := c.Load(); got != want {
		t.Errorf("got %d, want %d", got, want)
	}
}

// Goroutines running at once add to different lines: that is the point.
func TestHintSpreadsGoroutines(t *testing.T) {
	seen := make(chan uintptr, 64)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 64 {
		wg.Go(func() {
			<-start
			seen <- Hint() % lines
		})
	}
	close(start)
	wg.Wait()
	close(seen)
	used := map[uintptr]bool{}
	for h := range seen {
		used[h] = true
	}
	if len(used) < lines/2 {
		t.Errorf("64 goroutines used %d of %d lines, want most of them", len(used), lines)
	}
}

func BenchmarkInt64Add(b *testing.B) {
	var c Int64
	for b.Loop() {
		c.Add(1)
	}
}

func BenchmarkInt64AddParallel(b *testing.B) {
	var c Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.Add(1)
		}
	})
}
