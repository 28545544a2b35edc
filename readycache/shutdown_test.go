package readycache_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/readycache"
)

// stubborn is not ready now, and its Ready, once entered, takes a second
// whatever its context says, and then returns a permit of its mock.
type stubborn struct{ m *mock }

func (s stubborn) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	if ctx.Err() != nil {
		return tower.Permit[string, string]{}, ctx.Err()
	}
	time.Sleep(time.Second)
	return s.m.Ready(context.Background())
}

// Shutdown waits for the drivers only as long as its context lasts; a
// driver in a Ready that ignores its context finishes on its own, giving
// back what that Ready returns and telling the removal handler; Close
// waits for it. Every endpoint reaches the removal handler exactly once.
func TestShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var mu sync.Mutex
		var removed []string
		c := readycache.New[int, string, string, tower.Service[string, string]](
			readycache.WithRemovalHandler(func(k int, _ tower.Service[string, string]) {
				mu.Lock()
				defer mu.Unlock()
				removed = append(removed, fmt.Sprintf("%d at %v", k, time.Since(start)))
			}))
		slow, hs := newMock(-1)
		fast, hf := newMock(-1)
		c.Push(0, stubborn{slow})
		c.Push(1, fast)
		synctest.Wait()

		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		if err := c.Shutdown(ctx); err != context.DeadlineExceeded {
			t.Errorf("Shutdown: got %v, want %v", err, context.DeadlineExceeded)
		}
		if got := time.Since(start); got != 10*time.Millisecond {
			t.Errorf("Shutdown returned at %v, want 10ms", got)
		}
		hf.ExpectOutstanding(t, 0)
		if err := c.Close(); err != nil {
			t.Errorf("Close: got %v, want nil", err)
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("Close returned at %v, want 1s, when the last driver exited", got)
		}
		hs.ExpectOutstanding(t, 0)
		if err := c.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown once stopped, with a done context: got %v, want nil", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if got, want := fmt.Sprint(removed), "[1 at 0s 0 at 1s]"; got != want {
			t.Errorf("got removals %s, want %s", got, want)
		}
	})
}

// A push on a closed cache hands the endpoint to the removal handler, as
// Close would have: whoever pushed it need not close it.
func TestPushAfterClose(t *testing.T) {
	var removed []int
	c := readycache.New[int, string, string, *mock](readycache.WithRemovalHandler(func(k int, _ *mock) { removed = append(removed, k) }))
	c.Close()
	m, h := newMock(-1)
	c.Push(4, m)
	if fmt.Sprint(removed) != "[4]" || h.Outstanding() != 0 || c.Len() != 0 {
		t.Errorf("got removals %v, %d outstanding, Len() %d; want [4], 0, 0", removed, h.Outstanding(), c.Len())
	}
}
