// Package weakset keeps weak references to what a layer made, so that the
// layer can close what is still alive while the garbage collector takes
// the rest: a layer that wraps services for the life of a program must not
// keep every one it ever made.
package weakset

import (
	"sync"
	"weak"
)

// A Set holds weak pointers. The zero Set is empty and ready to use. A Set
// is safe for concurrent use.
type Set[T any] struct {
	mu   sync.Mutex
	made []weak.Pointer[T]
}

// Add adds p, and forgets the pointers whose values have been collected.
func (s *Set[T]) Add(p *T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	live := s.made[:0]
	for _, w := range s.made {
		if w.Value() != nil {
			live = append(live, w)
		}
	}
	s.made = append(live, weak.Make(p))
}

// Take empties the set and returns the values still alive.
func (s *Set[T]) Take() []*T {
	s.mu.Lock()
	made := s.made
	s.made = nil
	s.mu.Unlock()
	var live []*T
	for _, w := range made {
		if v := w.Value(); v != nil {
			live = append(live, v)
		}
	}
	return live
}
