package lifetime_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/towergo/tower/internal/lifetime"
	"github.com/towergo/tower/towertest"
)

// thing is big enough, and holds a pointer, so that it is not allocated by
// the tiny allocator, which keeps a whole block alive for one live object.
type thing struct {
	n int
	_ *thing
	_ [4]int
}

func TestTakeReturnsWhatIsHeld(t *testing.T) {
	var s lifetime.Set[thing]
	a, b, c := &thing{n: 1}, &thing{n: 2}, &thing{n: 3}
	s.Add(a)
	s.Add(b)
	s.Add(c)
	s.Remove(b)
	s.Remove(&thing{}) // not in the set: nothing happens
	got := s.Take()
	if len(got) != 2 || !(got[0] == a && got[1] == c || got[0] == c && got[1] == a) {
		t.Errorf("got %v, want %p and %p", got, a, c)
	}
	if again := s.Take(); len(again) != 0 {
		t.Errorf("a second Take returned %d values, want 0", len(again))
	}
}

// A Set holds what it was given until it is removed or taken, collections
// or not: the layer's Close must reach it.
func TestSetHoldsValues(t *testing.T) {
	var s lifetime.Set[thing]
	for i := range 3 {
		s.Add(&thing{n: i})
	}
	runtime.GC()
	if got := s.Take(); len(got) != 3 {
		t.Errorf("got %d values, want all 3", len(got))
	}
}

func ExampleSet() {
	var s lifetime.Set[thing]
	s.Add(&thing{n: 7})
	for _, v := range s.Take() {
		fmt.Println(v.n)
	}
	// Output: 7
}

// drop registers stop for a value it drops at once.
func drop(ran *atomic.Bool, stopped bool) {
	lifetime.OnUnreachable(&thing{n: 1}, "a thing", func(ran *atomic.Bool) bool {
		ran.Store(true)
		return stopped
	}, ran)
}

// collectUntil collects garbage until done reports true, or 1000 times,
// and reports whether it did.
func collectUntil(done func() bool) bool {
	for i := 0; i < 1000 && !done(); i++ {
		runtime.GC()
		runtime.Gosched() // let the cleanup goroutine run
	}
	return done()
}

const warning = `level=WARN msg="tower: a thing became unreachable without Close; stopped it"`

// The cleanup of a value dropped without Close stops it, and warns that it
// did.
func TestOnUnreachableWarns(t *testing.T) {
	log := towertest.CaptureLog(t)
	var ran atomic.Bool
	drop(&ran, true)
	if !collectUntil(func() bool { return strings.Contains(log.String(), warning) }) {
		t.Fatalf("no warning after 1000 collections (the cleanup ran: %v); the log:\n%s", ran.Load(), log.String())
	}
}

// A cleanup that finds nothing to stop, since the value was closed, says
// nothing.
func TestOnUnreachableQuietAfterClose(t *testing.T) {
	log := towertest.CaptureLog(t)
	var ran atomic.Bool
	drop(&ran, false)
	if !collectUntil(ran.Load) {
		t.Fatal("the cleanup of an unreachable value did not run after 1000 collections")
	}
	for range 100 { // time for a warning to be written, were one coming
		runtime.Gosched()
	}
	if strings.Contains(log.String(), "WARN") {
		t.Errorf("got a warning for a value that was closed:\n%s", log.String())
	}
}
