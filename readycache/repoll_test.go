package readycache_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/readycache"
)

// gated is an endpoint whose Ready, while its gate is shut, waits for the
// gate to open before asking its mock: an endpoint that has turned unfit
// for requests, as an ejected one is.
type gated struct {
	m      *mock
	mu     sync.Mutex
	shut   bool
	goexit bool // Ready ends its goroutine with runtime.Goexit
	opened chan struct{}
}

func newGated(allow int) (*gated, *handle) {
	m, h := newMock(allow)
	return &gated{m: m, opened: make(chan struct{})}, h
}

func (g *gated) setShut(shut bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut && !shut {
		close(g.opened)
		g.opened = make(chan struct{})
	}
	g.shut = shut
}

// setGoexit makes the next Ready end its goroutine with runtime.Goexit.
func (g *gated) setGoexit() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.goexit = true
}

func (g *gated) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	g.mu.Lock()
	shut, opened, goexit := g.shut, g.opened, g.goexit
	g.mu.Unlock()
	if goexit {
		runtime.Goexit()
	}
	if shut {
		select {
		case <-opened:
		case <-ctx.Done():
			return tower.Permit[string, string]{}, ctx.Err()
		}
	}
	return g.m.Ready(ctx)
}

type gatedCache = readycache.Cache[int, string, string, *gated]

func newGatedCache(t *testing.T) (*gatedCache, *failures) {
	f := &failures{}
	c := readycache.New[int, string, string, *gated](readycache.WithFailureHandler(f.add))
	t.Cleanup(func() { c.Close() })
	return c, f
}

type pickGated int

func (i pickGated) Pick([]*gated) int { return int(i) }

// checkGatedLens fails t unless c has ready ready endpoints and pending
// pending.
func checkGatedLens(t *testing.T, c *gatedCache, ready, pending int) {
	t.Helper()
	synctest.Wait()
	if got := c.ReadyLen(); got != ready {
		t.Errorf("got ReadyLen() = %d, want %d", got, ready)
	}
	if got := c.PendingLen(); got != pending {
		t.Errorf("got PendingLen() = %d, want %d", got, pending)
	}
}

// Repoll of a ready endpoint that is no longer ready now gives its held
// permit back and makes it pending at once: no Take picks it until its
// Ready grants again, and then it is ready again on its own.
func TestRepollReadyBecomesPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, f := newGatedCache(t)
		g0, h0 := newGated(-1)
		g1, _ := newGated(-1)
		c.Push(0, g0)
		c.Push(1, g1)
		checkGatedLens(t, c, 2, 0)

		g0.setShut(true)
		if !c.Repoll(0) {
			t.Fatal("got Repoll(0) = false, want true")
		}
		if c.IsReady(0) {
			t.Error("endpoint 0 is still ready after Repoll")
		}
		if got := h0.Outstanding(); got != 0 {
			t.Errorf("got %d permits outstanding on endpoint 0, want 0", got)
		}
		checkGatedLens(t, c, 1, 1)
		for range 3 {
			k, p, ok := c.TryTake(pickGated(0))
			if !ok || k != 1 {
				t.Fatalf("got TryTake = %d, %v, want 1, true", k, ok)
			}
			p.Release()
		}

		g0.setShut(false)
		checkGatedLens(t, c, 2, 0)
		if got := h0.Outstanding(); got != 1 {
			t.Errorf("got %d permits outstanding on endpoint 0, want 1", got)
		}
		f.check(t)
	})
}

// Repoll of a ready endpoint that is still ready now swaps its permit for
// a new one: it stays ready, holding one reservation.
func TestRepollReadyStaysReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newGatedCache(t)
		g, h := newGated(-1)
		c.Push(0, g)
		c.Repoll(0)
		if !c.IsReady(0) {
			t.Error("endpoint 0 is not ready after Repoll")
		}
		if got := h.Outstanding(); got != 1 {
			t.Errorf("got %d permits outstanding, want 1", got)
		}
		checkGatedLens(t, c, 1, 0)
	})
}

// Repoll of a pending endpoint whose driver is in Ready: the permit that
// Ready returns then is given back, and the endpoint asked again, so that
// a permit granted before it turned unfit never makes it ready.
func TestRepollPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, f := newGatedCache(t)
		g, h := newGated(0)
		c.Push(0, g)
		checkGatedLens(t, c, 0, 1) // the driver waits in the mock's Ready

		g.setShut(true)
		if !c.Repoll(0) {
			t.Fatal("got Repoll(0) = false, want true")
		}
		h.Allow(1)
		checkGatedLens(t, c, 0, 1)
		if got := h.Outstanding(); got != 0 {
			t.Errorf("got %d permits outstanding, want 0", got)
		}

		g.setShut(false)
		checkGatedLens(t, c, 1, 0)
		if got := h.Outstanding(); got != 1 {
			t.Errorf("got %d permits outstanding, want 1", got)
		}
		// The request to ask again was used up: a later permit makes the
		// endpoint ready as usual.
		_, p, _ := c.TryTake(pickGated(0))
		checkGatedLens(t, c, 0, 1)
		h.Allow(1)
		checkGatedLens(t, c, 1, 0)
		p.Release()
		f.check(t)
	})
}

// Repoll of a pending endpoint whose Ready, asked again once its driver's
// returns, ends the driver with runtime.Goexit: the endpoint is removed and
// reported, the permit the first Ready returned is given back, and the
// cache carries on. It used to deadlock: the driver ended holding the
// cache's lock.
func TestRepollPendingGoexit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, f := newGatedCache(t)
		g, h := newGated(0)
		c.Push(0, g)
		checkGatedLens(t, c, 0, 1)
		if !c.Repoll(0) {
			t.Fatal("got Repoll(0) = false, want true")
		}
		g.setGoexit() // for the next Ready: the driver's is in the mock's
		h.Allow(1)
		checkGoexited(t, c, f, h, "on a ready cache's driver")
	})
}

// checkGoexited fails t unless endpoint 0 has left c, reported as ended by
// runtime.Goexit where, with no permit of h's outstanding.
func checkGoexited(t *testing.T, c *gatedCache, f *failures, h *handle, where string) {
	t.Helper()
	checkGatedLens(t, c, 0, 0)
	f.check(t, "0: tower: panic in an endpoint's Ready, "+where+": runtime.Goexit was called")
	if c.Contains(0) {
		t.Error("the failed endpoint is still in the cache")
	}
	if got := h.Outstanding(); got != 0 {
		t.Errorf("got %d permits outstanding, want 0", got)
	}
}

// An endpoint whose Ready, asked again on the caller's goroutine as
// TryTake takes its permit, ends that goroutine with runtime.Goexit: the
// endpoint is removed and reported, and the permit taken, which nobody
// will use now, is released.
func TestTakeGoexit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, f := newGatedCache(t)
		g, h := newGated(-1)
		c.Push(0, g)
		checkGatedLens(t, c, 1, 0)
		g.setGoexit()
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.TryTake(pickGated(0))
			t.Error("TryTake returned, want its goroutine ended by the endpoint's Ready")
		}()
		<-done
		checkGoexited(t, c, f, h, "asked by a ready cache on its caller's goroutine")
	})
}

// Repoll of a key the cache does not have does nothing and reports false.
func TestRepollMissing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newGatedCache(t)
		if c.Repoll(7) {
			t.Error("got Repoll(7) = true on an empty cache, want false")
		}
	})
}

// An endpoint whose Ready fails when Repoll asks it is removed and
// reported, on Repoll's goroutine, its old permit released.
func TestRepollFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, f := newGatedCache(t)
		g, h := newGated(-1)
		c.Push(0, g)
		h.FailReady(errDoom)
		if !c.Repoll(0) {
			t.Fatal("got Repoll(0) = false, want true")
		}
		f.check(t, "0: "+errDoom.Error())
		if c.Contains(0) {
			t.Error("the failed endpoint is still in the cache")
		}
		if got := h.Outstanding(); got != 0 {
			t.Errorf("got %d permits outstanding, want 0", got)
		}
	})
}
