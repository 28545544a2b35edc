package readycache_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/readycache"
	"github.com/towergo/tower/towertest"
)

// removals records what the removal handler is told, with what the
// endpoint's mock had outstanding at that moment: the cache must have
// released the endpoint's reservation first.
type removals struct {
	mu      sync.Mutex
	list    []string
	handles map[*mock]*handle
}

func (r *removals) add(key int, svc *mock) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, fmt.Sprintf("%d (outstanding %d)", key, r.handles[svc].Outstanding()))
}

func (r *removals) check(t *testing.T, want ...string) {
	t.Helper()
	synctest.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if fmt.Sprint(r.list) != fmt.Sprint(want) {
		t.Errorf("got removals %q, want %q", r.list, want)
	}
}

// newRemovalCache returns a cache that reports failures and removals, and
// n mocks with their handles, each granting reservations as allowed.
func newRemovalCache(t *testing.T, allow ...int) (*cache, *failures, *removals, []*mock, []*handle) {
	f := &failures{}
	r := &removals{handles: map[*mock]*handle{}}
	c := readycache.New[int, string, string, *mock](readycache.WithFailureHandler(f.add), readycache.WithRemovalHandler(r.add))
	t.Cleanup(func() { c.Close() })
	var ms []*mock
	var hs []*handle
	for _, n := range allow {
		m, h := newMock(n)
		r.handles[m] = h
		ms, hs = append(ms, m), append(hs, h)
	}
	return c, f, r, ms, hs
}

// Every way out of the cache tells the removal handler once, after the
// endpoint's reservation is released: Evict of a ready endpoint, a Push
// that replaces one, a failed Ready, and Close.
func TestRemovalHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, f, r, ms, hs := newRemovalCache(t, -1, -1, -1, 0, -1)
		for i, m := range ms[:4] {
			c.Push(i, m)
		}
		checkLens(t, c, 3, 1)
		r.check(t)

		c.Evict(0)
		r.check(t, "0 (outstanding 0)")

		c.Push(1, ms[4]) // replaces endpoint 1
		r.check(t, "0 (outstanding 0)", "1 (outstanding 0)")

		hs[3].FailReady(errDoom) // the pending one's driver sees it
		r.check(t, "0 (outstanding 0)", "1 (outstanding 0)", "3 (outstanding 0)")
		f.check(t, "3: "+errDoom.Error())

		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		// Close removes what is left in no particular order.
		r.mu.Lock()
		slices.Sort(r.list[3:])
		r.mu.Unlock()
		r.check(t, "0 (outstanding 0)", "1 (outstanding 0)", "3 (outstanding 0)", "1 (outstanding 0)", "2 (outstanding 0)")
	})
}

// A Take that finds its endpoint broken when it asks for the next
// reservation tells the handler too; the permit it took is the caller's.
func TestRemovalHandlerOnTake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, f, r, ms, hs := newRemovalCache(t, 1)
		c.Push(7, ms[0])
		checkLens(t, c, 1, 0)
		hs[0].FailReady(errDoom)
		p, ok := c.TakeKey(7)
		if !ok {
			t.Fatal("TakeKey(7): got false, want the ready endpoint's permit")
		}
		r.check(t, "7 (outstanding 1)") // the permit taken is still out
		f.check(t, "7: "+errDoom.Error())
		p.Release()
	})
}

// An endpoint evicted while a driver waits in its Ready is handed to the
// handler only once that Ready has returned: the handler may close it
// without the cache still using it.
func TestRemovalHandlerWaitsForTheDriver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inReady := make(chan struct{})
		leave := make(chan struct{})
		var returned, handled bool
		var mu sync.Mutex
		svc := slowReady{entered: inReady, leave: leave, returned: func() {
			mu.Lock()
			defer mu.Unlock()
			returned = true
		}}
		c := readycache.New[int, string, string, slowReady](readycache.WithRemovalHandler(func(int, slowReady) {
			mu.Lock()
			defer mu.Unlock()
			if !returned {
				t.Error("the handler ran while the driver was still in Ready")
			}
			handled = true
		}))
		defer c.Close()
		c.Push(0, svc)
		<-inReady
		c.Evict(0) // cancels the driver's context; this Ready ignores it
		synctest.Wait()
		mu.Lock()
		if handled {
			t.Error("the handler ran before the driver's Ready returned")
		}
		mu.Unlock()
		close(leave)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if !handled {
			t.Error("the handler never ran")
		}
	})
}

// slowReady is not ready now, and its Ready, once entered, returns only
// when told to, whatever its context does.
type slowReady struct {
	entered, leave chan struct{}
	returned       func()
}

func (s slowReady) Ready(ctx context.Context) (tower.Permit[string, string], error) {
	if ctx.Err() != nil {
		return tower.Permit[string, string]{}, ctx.Err() // not ready now
	}
	close(s.entered)
	<-s.leave
	s.returned()
	return tower.Permit[string, string]{}, context.Canceled
}

func TestRemovalHandlerTypeMismatchPanics(t *testing.T) {
	want := "readycache.New: the removal handler is a func(int, string), want a func(int, *towertest.Mock[string,string])"
	towertest.Panics(t, want, func() {
		readycache.New[int, string, string, *mock](readycache.WithRemovalHandler(func(int, string) {}))
	})
	towertest.Panics(t, "readycache.WithRemovalHandler: nil handler", func() {
		readycache.WithRemovalHandler[int, *mock](nil)
	})
}

// slowRelease is an endpoint always ready, whose reservations take until
// gate is closed to be given back.
type slowRelease struct {
	gate     chan struct{}
	released atomic.Bool
}

func (s *slowRelease) Ready(context.Context) (tower.Permit[string, string], error) {
	r := &slowPermit{s: s}
	return tower.NewPermit[string, string](r, r.Token()), nil
}

type slowPermit struct {
	tower.Ticket
	s *slowRelease
}

func (p *slowPermit) CallReserved(_ context.Context, token uint64, req string) (string, error) {
	p.MustRedeem(token)
	return req, nil
}

func (p *slowPermit) ReleaseReserved(token uint64) {
	if p.Redeem(token) {
		<-p.s.gate
		p.s.released.Store(true)
	}
}

// The removal handler hears of an endpoint from the goroutine that removed
// it, once that one has released the endpoint's reservation, whatever
// other goroutines do with the cache meanwhile: here a Push of another key
// while an Evict is still releasing.
func TestRemovalHandlerAfterReleaseDespiteOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu   sync.Mutex
			told []string
		)
		slow := &slowRelease{gate: make(chan struct{})}
		c := readycache.New[string, string, string, tower.Service[string, string]](readycache.WithRemovalHandler(func(key string, svc tower.Service[string, string]) {
			mu.Lock()
			defer mu.Unlock()
			told = append(told, fmt.Sprintf("%s (released %t)", key, svc != tower.Service[string, string](slow) || slow.released.Load()))
		}))
		defer c.Close()
		c.Push("slow", slow)
		evicted := towertest.Go(func() (bool, error) { return c.Evict("slow"), nil })
		synctest.Wait() // Evict is releasing the reservation
		other, _ := newMock(1)
		c.Push("other", other)
		c.Evict("other")
		close(slow.gate)
		if ok, _ := evicted.Wait(); !ok {
			t.Fatal("Evict: got false, want true")
		}
		mu.Lock()
		defer mu.Unlock()
		if want := []string{"other (released true)", "slow (released true)"}; !slices.Equal(told, want) {
			t.Errorf("the removal handler was told %q, want %q", told, want)
		}
	})
}
