package weakset_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/towergo/tower/internal/weakset"
)

// thing is big enough, and holds a pointer, so that it is not allocated by
// the tiny allocator, which keeps a whole block alive for one live object.
type thing struct {
	n    int
	next *thing
	pad  [4]int
}

func TestTakeReturnsLiveValues(t *testing.T) {
	var s weakset.Set[thing]
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
	var s weakset.Set[thing]
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
	var s weakset.Set[thing]
	t := &thing{n: 7}
	s.Add(t)
	for _, v := range s.Take() {
		fmt.Println(v.n)
	}
	runtime.KeepAlive(t)
	// Output: 7
}
