package lifetime_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower/internal/lifetime"
)

// thing is big enough, and holds a pointer, so that it is not allocated by
// the tiny allocator, which keeps a whole block alive for one live object.
type thing struct {
	n    int
	next *thing
	pad  [4]int
}

func TestTakeReturnsLiveValues(t *testing.T) {
	var s lifetime.Set[thing]
	a, b := &thing{n: 1}, &thing{n: 2}
	s.Add(a)
	s.Add(b)
	got := s.Take()
	if len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("got %v, want [%p %p]", got, a, b)
	}
	if again := s.Take(); len(again) != 0 {
		t.Errorf("a second Take returned %d values, want 0", len(again))
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
}

func TestCollectedValuesAreForgotten(t *testing.T) {
	var s lifetime.Set[thing]
	for i := range 100 {
		s.Add(&thing{n: i})
	}
	runtime.GC()
	kept := &thing{n: -1}
	s.Add(kept) // forgets the collected ones
	if got := s.Take(); len(got) != 1 || got[0] != kept {
		t.Errorf("got %d values, want only the one still referenced", len(got))
	}
	runtime.KeepAlive(kept)
}

func ExampleSet() {
	var s lifetime.Set[thing]
	t := &thing{n: 7}
	s.Add(t)
	for _, v := range s.Take() {
		fmt.Println(v.n)
	}
	runtime.KeepAlive(t)
	// Output: 7
}

// Inside a synctest bubble a Set holds what it was given: no cleanup
// stops it there, so the layer's Close must reach it.
func TestSetHoldsValuesInBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s lifetime.Set[thing]
		for i := range 3 {
			s.Add(&thing{n: i})
		}
		runtime.GC()
		if got := s.Take(); len(got) != 3 {
			t.Errorf("got %d values, want all 3", len(got))
		}
	})
}

// dropBoth registers a cleanup for each of two values, one through
// OnUnreachable and one directly, and drops both.
func dropBoth(viaLifetime, direct *atomic.Bool) {
	a, b := &thing{n: 1}, &thing{n: 2}
	runtime.AddCleanup(b, func(f *atomic.Bool) { f.Store(true) }, direct)
	lifetime.OnUnreachable(a, func(f *atomic.Bool) { f.Store(true) }, viaLifetime)
}

// collectUntil collects garbage until done is set, or 1000 times, and a
// few times more, so that cleanups queued with the one that sets done have
// run too. It reports whether done is set.
func collectUntil(done *atomic.Bool) bool {
	for i := 0; i < 1000 && !done.Load(); i++ {
		runtime.GC()
		runtime.Gosched() // let the cleanup goroutine run
	}
	for range 10 {
		runtime.GC()
		runtime.Gosched()
	}
	return done.Load()
}

// Outside a bubble, OnUnreachable is runtime.AddCleanup.
func TestOnUnreachableOutsideBubble(t *testing.T) {
	var via, direct atomic.Bool
	dropBoth(&via, &direct)
	if !collectUntil(&via) {
		t.Error("the cleanup of an unreachable value did not run after 1000 collections")
	}
}

// Inside a bubble, OnUnreachable registers nothing: a cleanup runs outside
// every bubble, where stopping what the bubble made is a fatal error. The
// direct cleanup of a value dropped at the same time shows that the
// collector got to both.
func TestOnUnreachableInBubble(t *testing.T) {
	var via, direct atomic.Bool
	synctest.Test(t, func(t *testing.T) {
		dropBoth(&via, &direct)
	})
	if !collectUntil(&direct) {
		t.Fatal("the direct cleanup did not run after 1000 collections")
	}
	if via.Load() {
		t.Error("OnUnreachable's cleanup ran for a value made in a bubble")
	}
}
