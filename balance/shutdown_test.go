package balance_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/discover"
)

// slowDiscover has no change now; asked to wait, it takes a second
// whatever its context says, and then inserts late under key 9.
type slowDiscover struct{ late endpoint }

func (d slowDiscover) Next(ctx context.Context) (discover.Change[int, endpoint], error) {
	if ctx.Err() != nil {
		return discover.Change[int, endpoint]{}, ctx.Err()
	}
	time.Sleep(time.Second)
	return discover.Change[int, endpoint]{Kind: discover.Insert, Key: 9, Service: d.late}, nil
}

// stubborn is an endpoint that is not ready now, and whose Ready, once
// entered, takes a second whatever its context says, and then returns a
// permit of its inner endpoint.
type stubborn struct{ endpoint }

func (s stubborn) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	if ctx.Err() != nil {
		return tower.Permit[string, string]{}, ctx.Err()
	}
	time.Sleep(time.Second)
	return s.endpoint.Ready(context.Background())
}

// Shutdown waits for the balancer's goroutines only as long as its context
// lasts: with a Discover and an endpoint that ignore their contexts for a
// second, it returns context.DeadlineExceeded at 10ms, having released the
// ready endpoints. The two finish on their own at 1s: the endpoint's
// permit is released, and the endpoint inserted late goes to the removal
// handler, like every other endpoint, exactly once. Close waits for them.
func TestShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var mu sync.Mutex
		var removed []string
		ready, hr := constMock(-1, 0)
		slow, hs := constMock(-1, 0)
		late, hl := constMock(-1, 0)
		// The list, then the slow Discover: a Discover of both.
		d := &concat{first: list(ready, stubborn{slow}), then: slowDiscover{late}}
		bal := balance.NewP2C(d, balance.WithRemovalHandler(func(k int, _ endpoint) {
			mu.Lock()
			defer mu.Unlock()
			removed = append(removed, fmt.Sprintf("%d at %v", k, time.Since(start)))
		}))
		synctest.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		if err := bal.Shutdown(ctx); err != context.DeadlineExceeded {
			t.Errorf("Shutdown: got %v, want %v", err, context.DeadlineExceeded)
		}
		if got := time.Since(start); got != 10*time.Millisecond {
			t.Errorf("Shutdown returned at %v, want 10ms", got)
		}
		if n := hr.Outstanding(); n != 0 {
			t.Errorf("the ready endpoint has %d reservations outstanding after Shutdown, want 0", n)
		}
		if _, err := bal.Ready(t.Context()); err != balance.ErrClosed {
			t.Errorf("Ready after Shutdown: got %v, want %v", err, balance.ErrClosed)
		}
		if err := bal.Close(); err != nil {
			t.Errorf("Close: got %v, want nil", err)
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("Close returned at %v, want 1s", got)
		}
		for name, h := range map[string]*handle{"slow": hs, "late": hl} {
			if n := h.Outstanding(); n != 0 {
				t.Errorf("the %s endpoint has %d reservations outstanding, want 0", name, n)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		slices.Sort(removed) // the two at 1s come in no particular order
		if got, want := fmt.Sprint(removed), "[0 at 0s 1 at 1s 9 at 1s]"; got != want {
			t.Errorf("got removals %s, want %s", got, want)
		}
	})
}

// concat is a Discover that answers as first does until it ends, and then
// as then does.
type concat struct {
	first, then discover.Discover[int, endpoint]
	firstDone   bool
}

func (c *concat) Next(ctx context.Context) (discover.Change[int, endpoint], error) {
	if !c.firstDone {
		ch, err := c.first.Next(ctx)
		if err == nil {
			return ch, nil
		}
		c.firstDone = true
	}
	return c.then.Next(ctx)
}

// Shutdown of a RoundRobin over a List, with nothing to wait for, returns
// nil at once, even with a done context.
func TestShutdownRoundRobin(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	rr := balance.NewRoundRobin(discover.NewList(named("a")))
	if err := rr.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: got %v, want nil", err)
	}
	if _, err := rr.Ready(t.Context()); err != balance.ErrClosed {
		t.Errorf("Ready after Shutdown: got %v, want %v", err, balance.ErrClosed)
	}
}
