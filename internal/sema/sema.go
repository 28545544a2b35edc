// Package sema is the counting semaphore behind ConcurrencyLimit and
// Buffer's slots: first come, first served, context-aware, closable with an
// error, and allocation-free when it does not have to wait.
//
// Waiters park on channels, not on sync.Cond, so that under testing/synctest
// a goroutine waiting for a unit is durably blocked.
package sema

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/towergo/tower/internal/waitq"
)

// The state word packs what the fast paths need into one atomic:
//
//	bits  0..31  units available
//	bits 32..62  goroutines queued for a unit
//	bit  63      closed
//
// A unit can be taken without the lock only when nobody is queued, and
// given back without the lock only when nobody is queued; otherwise the lock
// holder hands it to the oldest waiter directly, so a newcomer never
// overtakes the queue and a release wakes exactly one waiter.
const (
	availMask  = 1<<32 - 1
	oneWaiter  = 1 << 32
	waiterMask = (1<<31 - 1) << 32
	closedBit  = 1 << 63

	minusOneWaiter = ^uint64(oneWaiter - 1) // adding it subtracts oneWaiter
)

// MaxUnits is the largest number of units a Sema can hold.
const MaxUnits = availMask

// A Sema is a FIFO counting semaphore. The zero Sema has no units.
type Sema struct {
	state atomic.Uint64
	max   uint64 // units the Sema was made with; never changes

	mu  sync.Mutex // guards q and err
	q   waitq.Queue
	err error // set by Close
}

// New returns a Sema holding n units. It panics unless 0 <= n <= MaxUnits.
func New(n int) *Sema {
	if n < 0 || n > MaxUnits {
		panic(fmt.Sprintf("sema.New: n must be between 0 and %d, got %d", MaxUnits, n))
	}
	s := &Sema{max: uint64(n)}
	s.state.Store(uint64(n))
	return s
}

// TryAcquire takes a unit if one is free and nobody is queued.
func (s *Sema) TryAcquire() bool {
	for {
		st := s.state.Load()
		if st&(closedBit|waiterMask) != 0 || st&availMask == 0 {
			return false
		}
		if s.state.CompareAndSwap(st, st-1) {
			return true
		}
	}
}

// Acquire takes a unit, waiting in line for one if none is free. A free unit
// is taken even if ctx is already done. It returns ctx.Err() unchanged if
// ctx ends first, and the Close error if the Sema is closed.
func (s *Sema) Acquire(ctx context.Context) error {
	if s.TryAcquire() {
		return nil
	}
	w, err := s.enqueue(ctx)
	if w == nil {
		return err
	}
	select {
	case <-w.Ready:
		return w.Err
	case <-ctx.Done():
		return s.cancel(w, ctx.Err())
	}
}

// enqueue takes a unit under the lock if one came free, or queues a waiter.
// It returns a nil waiter when the outcome is already known.
func (s *Sema) enqueue(ctx context.Context) (*waitq.Waiter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		st := s.state.Load()
		switch {
		case st&closedBit != 0:
			return nil, s.err
		case st&waiterMask == 0 && st&availMask != 0:
			if s.state.CompareAndSwap(st, st-1) {
				return nil, nil
			}
		case ctx.Err() != nil:
			return nil, ctx.Err()
		default:
			if s.state.CompareAndSwap(st, st+oneWaiter) {
				w := waitq.New()
				s.q.Push(w)
				return w, nil
			}
		}
	}
}

// cancel withdraws w after its ctx ended. If w was woken in the meantime,
// its outcome stands: a caller granted a unit as its ctx ended keeps the
// unit, as if it had not noticed the cancellation (x/sync/semaphore does the
// same).
func (s *Sema) cancel(w *waitq.Waiter, ctxErr error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.q.Remove(w) {
		return w.Err
	}
	s.state.Add(minusOneWaiter)
	return ctxErr
}

// overRelease is the panic message for a Release without a unit held.
const overRelease = "sema: Release of a unit that is not held"

// Release gives a unit back, to the oldest waiter if there is one. It panics
// if no unit is held: every unit is already free.
func (s *Sema) Release() {
	for {
		st := s.state.Load()
		if st&availMask >= s.max {
			panic(overRelease)
		}
		if st&waiterMask != 0 {
			break
		}
		if s.state.CompareAndSwap(st, st+1) {
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// The waiter count only changes under the lock, so it is exact here.
	if s.q.Wake(0, nil) {
		// The unit went straight to the oldest waiter.
		s.state.Add(minusOneWaiter)
		return
	}
	// The last waiter left between the load and the lock. Units can still be
	// freed without the lock, so count this one in with a CAS that checks it.
	for {
		st := s.state.Load()
		if st&availMask >= s.max {
			panic(overRelease)
		}
		if s.state.CompareAndSwap(st, st+1) {
			return
		}
	}
}

// Close fails every queued waiter and every later Acquire with err, which
// must not be nil: a waiter woken with a nil error would take it for a unit.
// Units already held can still be released. Close is idempotent; the first
// err stays.
func (s *Sema) Close(err error) {
	if err == nil {
		panic("sema.Close: err is nil")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state.Load()&closedBit != 0 {
		return
	}
	s.err = err
	s.state.Or(closedBit)
	for s.q.Wake(0, err) {
		s.state.Add(minusOneWaiter)
	}
}

// Available returns the number of free units.
func (s *Sema) Available() int { return int(s.state.Load() & availMask) }

// Waiting returns the number of goroutines queued for a unit.
func (s *Sema) Waiting() int { return int(s.state.Load() & waiterMask >> 32) }
