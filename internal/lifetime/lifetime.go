// Package lifetime keeps track of what a layer made until it is closed
// (a Set), and stops with a warning what a program drops without closing
// (OnUnreachable). A cleanup runs outside every testing/synctest bubble,
// where that stop is fatal: a test must close what it makes.
package lifetime

import (
	"log/slog"
	"runtime"
	"sync"
)

// OnUnreachable arranges for stop(arg) to run once owner is unreachable.
// If stop reports that it stopped something, which it must not once owner
// has been closed, a warning says that what, a description of owner such
// as "a spawnready.SpawnReady", was not closed. arg must not reach owner,
// or owner is never unreachable; stop must not block.
func OnUnreachable[T, A any](owner *T, what string, stop func(A) bool, arg A) {
	runtime.AddCleanup(owner, func(arg A) {
		if stop(arg) {
			slog.Warn("tower: " + what + " became unreachable without Close; stopped it")
		}
	}, arg)
}

// A Set holds what a layer made and has not closed. The zero Set is empty
// and ready to use. A Set is safe for concurrent use.
type Set[T any] struct {
	mu   sync.Mutex
	made map[*T]struct{}
}

// Add adds p.
func (s *Set[T]) Add(p *T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.made == nil {
		s.made = make(map[*T]struct{})
	}
	s.made[p] = struct{}{}
}

// Remove forgets p, which has been closed. It does nothing if p is not in
// the set.
func (s *Set[T]) Remove(p *T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.made, p)
}

// Take empties the set and returns what it held, in no particular order.
func (s *Set[T]) Take() []*T {
	s.mu.Lock()
	made := s.made
	s.made = nil
	s.mu.Unlock()
	taken := make([]*T, 0, len(made))
	for p := range made {
		taken = append(taken, p)
	}
	return taken
}
