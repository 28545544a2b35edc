package readycache_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/readycache"
	"github.com/towergo/tower/towertest"
)

const (
	onCaller = "tower: panic in an endpoint's Ready, asked by a ready cache on its caller's goroutine: boom"
	onDriver = "tower: panic in an endpoint's Ready, on a ready cache's driver: boom"
)

// An endpoint whose Ready panics, wherever the cache asks it, fails its
// readiness: it is removed, reported as a Failed of a PanicError that says
// where, and handed to the removal handler; nothing panics out of the
// cache, and a permit taken just before is the caller's.
func TestReadyPanicFailsEndpoint(t *testing.T) {
	for _, tt := range []struct {
		name        string
		allow       int
		panicBefore bool // PanicReady before the push, not after it
		take        func(c *cache) (tower.Permit[string, string], bool)
		failure     string
		removal     string
	}{
		{"Push", -1, true, nil, onCaller, "0 (outstanding 0)"},
		{"TakeKey", -1, false, func(c *cache) (tower.Permit[string, string], bool) { return c.TakeKey(0) }, onCaller, "0 (outstanding 1)"},
		{"TryTake", -1, false, func(c *cache) (tower.Permit[string, string], bool) {
			_, p, ok := c.TryTake(pickAt(0))
			return p, ok
		}, onCaller, "0 (outstanding 1)"},
		{"Take", -1, false, func(c *cache) (tower.Permit[string, string], bool) {
			_, p, err := c.Take(context.Background(), pickAt(0))
			return p, err == nil
		}, onCaller, "0 (outstanding 1)"},
		{"Driver", 0, false, nil, onDriver, "0 (outstanding 0)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, f, r, ms, hs := newRemovalCache(t, tt.allow)
				if tt.panicBefore {
					hs[0].PanicReady("boom")
				}
				c.Push(0, ms[0])
				synctest.Wait()
				hs[0].PanicReady("boom")
				if tt.take != nil {
					p, ok := tt.take(c)
					if !ok {
						t.Fatal("got no permit, want the one the endpoint held")
					}
					r.check(t, tt.removal)
					towertest.CallThrough(t, p, hs[0], "x", "served")
				} else {
					r.check(t, tt.removal)
				}
				checkLens(t, c, 0, 0)
				hs[0].ExpectOutstanding(t, 0)
				f.check(t, "0: "+tt.failure)
			})
		})
	}
}

// The failure carries the PanicError, with the panic's value and stack.
func TestReadyPanicIsAPanicError(t *testing.T) {
	var got error
	c := readycache.New[int, string, string, *mock](readycache.WithFailureHandler(func(f *readycache.Failed[int]) { got = f }))
	defer c.Close()
	m, h := newMock(-1)
	h.PanicReady("boom")
	c.Push(0, m)
	var pe *tower.PanicError
	if !errors.As(got, &pe) || pe.Value != "boom" || len(pe.Stack) == 0 {
		t.Fatalf("got failure %v, want a Failed of a *tower.PanicError of boom with a stack", got)
	}
}

// goexitReady ends the goroutine that asks it for readiness with
// runtime.Goexit: a driver's only, unless now, when Push's too (ReadyNow
// asks with a done ctx).
type goexitReady struct{ now bool }

func (g goexitReady) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	if ctx.Err() != nil && !g.now {
		return tower.Permit[string, string]{}, ctx.Err()
	}
	runtime.Goexit()
	panic("unreachable")
}

// A Ready that calls runtime.Goexit fails its endpoint, as a panic does:
// on a driver, or on Push's goroutine, which it ends, and then the
// cache's own goroutine tells the handlers.
func TestReadyGoexit(t *testing.T) {
	for _, tt := range []struct {
		name  string
		now   bool
		where string
	}{
		{"OnDriver", false, "on a ready cache's driver"},
		{"OnPush", true, "asked by a ready cache on its caller's goroutine"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var got []string
				c := readycache.New[int, string, string, goexitReady](
					readycache.WithFailureHandler(func(f *readycache.Failed[int]) { got = append(got, f.Error()) }),
					readycache.WithRemovalHandler(func(k int, _ goexitReady) { got = append(got, "removed") }))
				done := make(chan struct{})
				go func() {
					defer close(done)
					c.Push(0, goexitReady{now: tt.now})
				}()
				<-done
				synctest.Wait()
				want := "[tower: panic in an endpoint's Ready, " + tt.where + ": runtime.Goexit was called removed]"
				if s := fmt.Sprint(got); s != want {
					t.Errorf("got %s, want %s", s, want)
				}
				if n := c.Len(); n != 0 {
					t.Errorf("got Len() %d, want 0", n)
				}
				c.Close()
			})
		})
	}
}

// A panic in a handler on a driver is logged, and the cache carries on: a
// failure handler that panics still lets the removal handler hear of the
// endpoint, and a removal handler that panics breaks nothing.
func TestHandlerPanicsOnDriver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := towertest.CaptureLog(t)
		var mu sync.Mutex
		var removed []int
		c := readycache.New[int, string, string, *mock](
			readycache.WithFailureHandler(func(*readycache.Failed[int]) { panic("failure handler exploded") }),
			readycache.WithRemovalHandler(func(k int, _ *mock) {
				mu.Lock()
				removed = append(removed, k)
				mu.Unlock()
				if k == 0 {
					panic("removal handler exploded")
				}
			}))
		defer c.Close()
		m, h := newMock(0)
		c.Push(0, m)
		synctest.Wait()
		h.FailReady(errDoom)
		synctest.Wait()
		for _, want := range []string{
			"the failure handler, on a ready cache's driver", "failure handler exploded",
			"the removal handler, on a ready cache's driver", "removal handler exploded",
		} {
			if !strings.Contains(l.String(), want) {
				t.Errorf("the log does not say %q; got:\n%s", want, l.String())
			}
		}
		mu.Lock()
		if len(removed) != 1 || removed[0] != 0 {
			t.Errorf("got removals %v, want [0]", removed)
		}
		mu.Unlock()
		m2, h2 := newMock(-1)
		c.Push(1, m2)
		p, ok := c.TakeKey(1)
		if !ok {
			t.Fatal("TakeKey after the panics: got no permit, want one")
		}
		towertest.CallThrough(t, p, h2, "x", "served")
	})
}

// A driver whose endpoint was evicted while its Ready waited has no one to
// tell of a panic there: it is logged.
func TestReadyPanicAfterEvict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := towertest.CaptureLog(t)
		var failures []string
		svc := &panicLater{leave: make(chan struct{})}
		c := readycache.New[int, string, string, *panicLater](
			readycache.WithFailureHandler(func(f *readycache.Failed[int]) { failures = append(failures, f.Error()) }))
		defer c.Close()
		c.Push(0, svc)
		synctest.Wait()
		c.Evict(0)
		close(svc.leave)
		synctest.Wait()
		if !strings.Contains(l.String(), "an endpoint's Ready, on a ready cache's driver") || !strings.Contains(l.String(), "late boom") {
			t.Errorf("the log does not tell of the late panic; got:\n%s", l.String())
		}
		if len(failures) != 0 {
			t.Errorf("got failures %q for an evicted endpoint, want none", failures)
		}
	})
}

// panicLater is not ready now; its Ready, once entered, panics when told
// to, whatever its context does.
type panicLater struct{ leave chan struct{} }

func (s *panicLater) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	if ctx.Err() != nil {
		return tower.Permit[string, string]{}, ctx.Err()
	}
	<-s.leave
	panic("late boom")
}

// A panic in a handler the cache calls on its caller's goroutine goes up to
// that caller, with every reservation given back and the cache consistent:
// Evict, a TakeKey whose refill fails (the permit taken is released, since
// the caller never gets it), and Close (every endpoint is still released
// and handed to the removal handler).
func TestHandlerPanicsOnCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		removed := map[int]int{}
		c := readycache.New[int, string, string, *mock](
			readycache.WithFailureHandler(func(*readycache.Failed[int]) { panic("failure handler exploded") }),
			readycache.WithRemovalHandler(func(k int, _ *mock) {
				mu.Lock()
				removed[k]++
				mu.Unlock()
				panic("removal handler exploded")
			}))
		var hs []*handle
		for i := range 4 {
			m, h := newMock(-1)
			hs = append(hs, h)
			c.Push(i, m)
		}
		towertest.Panics(t, "removal handler exploded", func() { c.Evict(0) })
		hs[0].ExpectOutstanding(t, 0)

		hs[1].FailReady(errDoom)
		towertest.Panics(t, "removal handler exploded", func() { c.TakeKey(1) }) // the later panic wins
		hs[1].ExpectOutstanding(t, 0)
		checkLens(t, c, 2, 0)

		towertest.Panics(t, "removal handler exploded", func() { c.Close() })
		hs[2].ExpectOutstanding(t, 0)
		hs[3].ExpectOutstanding(t, 0)
		mu.Lock()
		defer mu.Unlock()
		if got, want := fmt.Sprint(removed), "map[0:1 1:1 2:1 3:1]"; got != want {
			t.Errorf("got removals %s, want each endpoint once: %s", got, want)
		}
	})
}

// pickPanics is a Picker that panics.
type pickPanics struct{}

func (pickPanics) Pick([]*mock) int { panic("picker exploded") }

// A panic in the Picker goes up to the caller of TryTake, with the cache
// unlocked and unchanged.
func TestPickerPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newCache(t)
		m, h := newMock(-1)
		c.Push(0, m)
		towertest.Panics(t, "picker exploded", func() { c.TryTake(pickPanics{}) })
		towertest.Panics(t, "picker exploded", func() { c.Take(t.Context(), pickPanics{}) })
		checkLens(t, c, 1, 0)
		h.ExpectOutstanding(t, 1) // the one the ready endpoint holds
	})
}
