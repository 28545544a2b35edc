// Package sema is the counting semaphore behind limit.Concurrency and the
// Buffer's slots: first come, first served, closable with an error,
// allocation-free when it does not wait, and striped.
package sema

import (
	"context"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/internal/stripe"
	"github.com/towergo/tower/internal/waitq"
	"github.com/towergo/tower/metrics"
)

// A goroutine takes from and gives back to the stripe s.hint picks, and
// takes from the others before it waits. A unit is taken without the lock
// only when nobody waits, so a newcomer never overtakes the queue. A
// waiter counts itself in ctl, under the lock, before it looks in the
// stripes one last time; a release adds its unit to a stripe before it
// reads ctl. So either the waiter finds the unit, or the release sees the
// waiter and hands a unit over under the lock, oldest waiter first.
//
// A slot is a place in a small table the Sema's user keeps (Concurrency
// keeps a permit record there), claimed and freed with a unit in the same
// atomic step, so that the common path finds its record without a pool.
const (
	waiterMask = 1<<32 - 1
	closedBit  = 1 << 63

	maxStripes     = 16
	unitsPerStripe = 16 // the fewest units a stripe is made for

	unitMask = 1<<32 - 1 // a stripe word's free units
	slotBit0 = 1 << 32   // a stripe word's bit for its slot 0

	// SlotsPerStripe is the number of slots each stripe has. A Sema has
	// Slots() of them in all, numbered from 0.
	SlotsPerStripe = 8
	allSlots       = 1<<SlotsPerStripe - 1
)

// NoSlot is the slot of a unit taken without one.
const NoSlot = -1

// MaxUnits is the largest number of units a Sema can hold.
const MaxUnits = 1<<32 - 1

const (
	overRelease = "sema: Release of a unit that is not held"
	unheldSlot  = "sema: ReleaseSlot of a slot that is not claimed"
)

// A Sema is a FIFO counting semaphore. The zero Sema has no units.
type Sema struct {
	ctl   atomic.Uint64 // waiters (bits 0..31) and closedBit
	_     [56]byte
	lines []line // a power of two of them
	mask  uintptr
	max   int64 // units the Sema was made with; never changes

	mu  sync.Mutex // guards q and err
	q   waitq.Queue
	err error // set by Close
}

type line struct {
	free atomic.Uint64 // free units (bits 0..31) and claimed slots (bits 32..39)
	_    [56]byte
}

// New returns a Sema holding n units. It panics unless 0 <= n <= MaxUnits.
func New(n int) *Sema {
	option.PanicIf(n < 0 || n > MaxUnits, "sema.New: n must be between 0 and %d, got %d", MaxUnits, n)
	stripes := 1
	for stripes < maxStripes && n/(2*stripes) >= unitsPerStripe {
		stripes *= 2
	}
	s := &Sema{lines: make([]line, stripes), mask: uintptr(stripes - 1), max: int64(n)}
	for i := range s.lines {
		s.lines[i].free.Store(uint64(n / stripes))
	}
	for i := range n % stripes {
		s.lines[i].free.Add(1)
	}
	return s
}

func (s *Sema) hint() uintptr { return stripe.Hint() }

// take takes a free unit from any stripe, starting with stripe h, and, if
// claim, a free slot of the same stripe (or NoSlot if none is).
func (s *Sema) take(h uintptr, claim bool) (slot int, ok bool) {
	for k := range uintptr(len(s.lines)) {
		i := (h + k) & s.mask
		l := &s.lines[i]
		for v := l.free.Load(); v&unitMask > 0; v = l.free.Load() {
			next, slot := v-1, NoSlot
			if free := ^(v >> 32) & allSlots; claim && free != 0 {
				b := bits.TrailingZeros64(free)
				next |= slotBit0 << b
				slot = int(i)*SlotsPerStripe + b
			}
			if l.free.CompareAndSwap(v, next) {
				return slot, true
			}
		}
	}
	return NoSlot, false
}

func (s *Sema) takeUnit(h uintptr) bool {
	_, ok := s.take(h, false)
	return ok
}

// TryAcquire takes a unit if one is free and nobody is queued.
func (s *Sema) TryAcquire() bool {
	return s.ctl.Load() == 0 && s.takeUnit(s.hint())
}

// Slots returns the number of slots the Sema has.
func (s *Sema) Slots() int { return len(s.lines) * SlotsPerStripe }

// TryAcquireSlot is TryAcquire that also claims a free slot, NoSlot if it
// finds none, until ReleaseSlot gives the unit back.
func (s *Sema) TryAcquireSlot() (slot int, ok bool) {
	if s.ctl.Load() != 0 {
		return NoSlot, false
	}
	return s.take(s.hint(), true)
}

// Acquire takes a unit, waiting in line for one if none is free. A free unit
// is taken even if ctx is already done. It returns ctx.Err() unchanged if
// ctx ends first, and the Close error if the Sema is closed.
func (s *Sema) Acquire(ctx context.Context) error { return s.AcquireWatched(ctx, nil) }

// AcquireWatched is Acquire that tells sink, unless it is nil, Waiting +1
// and -1 while the caller waits in line, without the lock (waitq.Wait).
func (s *Sema) AcquireWatched(ctx context.Context, sink metrics.Sink) error {
	if s.TryAcquire() {
		return nil
	}
	w, err := s.enqueue(ctx)
	if w == nil {
		return err
	}
	_, err = waitq.Wait(ctx, w, sink, s.withdraw, s.giveBack)
	return err
}

func (s *Sema) giveBack(uint64) { s.Release() }

// enqueue takes a unit under the lock if nobody is ahead and one is free,
// or queues a waiter; a nil waiter if the outcome is known.
func (s *Sema) enqueue(ctx context.Context) (*waitq.Waiter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctl.Load()&closedBit != 0 {
		return nil, s.err
	}
	// Counted first, so that a unit released from now on is handed over
	// under the lock rather than left in a stripe.
	s.ctl.Add(1)
	if s.q.Len() == 0 && s.takeUnit(s.hint()) {
		s.ctl.Add(^uint64(0))
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		s.ctl.Add(^uint64(0))
		return nil, err
	}
	w := waitq.New()
	s.q.Push(w)
	return w, nil
}

// withdraw takes w out of the queue, and reports whether it was there:
// false if it was woken.
func (s *Sema) withdraw(w *waitq.Waiter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.q.Remove(w) {
		return false
	}
	s.ctl.Add(^uint64(0))
	return true
}

// Release gives a unit back, to the oldest waiter if there is one. It panics
// if the caller's stripe would hold more units than it was made with.
func (s *Sema) Release() {
	if len(s.lines) == 0 {
		panic(overRelease) // the zero Sema holds nothing
	}
	s.give(&s.lines[s.hint()&s.mask], 1, 0)
}

// ReleaseSlot gives back a unit taken with TryAcquireSlot and frees its
// slot (NoSlot: none). It panics if the slot is not claimed, or as Release
// does.
func (s *Sema) ReleaseSlot(slot int) {
	if slot == NoSlot {
		s.Release()
		return
	}
	if slot < 0 || slot >= s.Slots() {
		panic(unheldSlot)
	}
	bit := uint64(slotBit0) << (slot % SlotsPerStripe)
	s.give(&s.lines[slot/SlotsPerStripe], 1-bit, bit)
}

// give adds delta to l's word, giving back a unit and clearing the slot
// bit, if any, then hands units to waiters. An add that gives back what
// was not held is undone before give panics.
func (s *Sema) give(l *line, delta, bit uint64) {
	old := l.free.Add(delta) - delta
	if old&bit != bit || int64(old&unitMask) >= s.max {
		l.free.Add(-delta)
		if old&bit != bit {
			panic(unheldSlot)
		}
		panic(overRelease)
	}
	if s.ctl.Load()&waiterMask != 0 {
		s.handOff()
	}
}

func (s *Sema) handOff() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.q.Len() > 0 && s.takeUnit(0) {
		s.q.Wake(0, nil)
		s.ctl.Add(^uint64(0))
	}
}

// Close fails every queued waiter and every later Acquire with err, which
// must not be nil; units held can still be released. The first err stays.
func (s *Sema) Close(err error) {
	option.PanicIf(err == nil, "sema.Close: err is nil")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctl.Load()&closedBit != 0 {
		return
	}
	s.err = err
	s.ctl.Or(closedBit)
	for s.q.Wake(0, err) {
		s.ctl.Add(^uint64(0))
	}
}

// Available returns the number of free units.
func (s *Sema) Available() int {
	n := 0
	for i := range s.lines {
		n += int(s.lines[i].free.Load() & unitMask)
	}
	return n
}

// Waiting returns the number of goroutines queued for a unit.
func (s *Sema) Waiting() int { return int(s.ctl.Load() & waiterMask) }
