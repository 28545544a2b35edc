// Package lifetime ends the goroutines of what nothing references any
// more: it registers the cleanup that stops a Buffer, SpawnReady or
// Reconnect the garbage collector finds unreachable, and keeps the weak
// references through which a layer closes what it made, so that a layer
// that wraps services for the life of a program does not keep every one
// it ever made.
//
// Inside a testing/synctest bubble it does neither. A cleanup runs on a
// goroutine outside every bubble, where closing a channel or cancelling a
// context the bubble made is a fatal error; so there nothing is stopped
// behind the test's back, a layer holds what it made until its Close, and
// whatever the test forgot to close is left running, for synctest to
// report when the test ends.
package lifetime

import (
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/towergo/tower/internal/mono"
)

// OnUnreachable arranges for stop(arg) to run once owner is unreachable,
// as runtime.AddCleanup does, unless the caller runs in a synctest bubble.
// arg must not reach owner, or owner is never unreachable.
func OnUnreachable[T, A any](owner *T, stop func(A), arg A) {
	if !inBubble() {
		runtime.AddCleanup(owner, stop, arg)
	}
}

// inBubble reports whether the caller runs in a testing/synctest bubble,
// where time.Now follows the bubble's clock and carries no monotonic
// reading.
func inBubble() bool {
	_, ok := mono.Of(time.Now())
	return !ok
}

// A Set holds what a layer made: weak pointers, or, inside a synctest
// bubble, strong ones. The zero Set is empty and ready to use. A Set is
// safe for concurrent use.
type Set[T any] struct {
	mu   sync.Mutex
	made []entry[T]
}

type entry[T any] struct {
	weak   weak.Pointer[T]
	strong *T // inside a bubble, where no cleanup would stop what is dropped
}

func (e entry[T]) value() *T {
	if e.strong != nil {
		return e.strong
	}
	return e.weak.Value()
}

// Add adds p, and forgets the values that have been collected.
func (s *Set[T]) Add(p *T) {
	e := entry[T]{weak: weak.Make(p)}
	if inBubble() {
		e.strong = p
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	live := s.made[:0]
	for _, m := range s.made {
		if m.value() != nil {
			live = append(live, m)
		}
	}
	s.made = append(live, e)
}

// Take empties the set and returns the values still alive.
func (s *Set[T]) Take() []*T {
	s.mu.Lock()
	made := s.made
	s.made = nil
	s.mu.Unlock()
	var live []*T
	for _, m := range made {
		if v := m.value(); v != nil {
			live = append(live, v)
		}
	}
	return live
}
