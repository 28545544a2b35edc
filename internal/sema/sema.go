// Package sema is the counting semaphore behind ConcurrencyLimit and
// Buffer's slots: first come, first served, context-aware, closable with an
// error, allocation-free when it does not wait, and striped (see package
// stripe).
package sema

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/internal/stripe"
	"github.com/towergo/tower/internal/waitq"
)

// The free units are spread over stripes, each on a cache line of its own;
// a goroutine takes from and gives back to the stripe its stack address
// picks, and takes from the others before it waits.
//
// ctl counts the waiters and holds the closed bit. A unit is taken without
// the lock only when nobody waits, so a newcomer never overtakes the
// queue. A waiter counts itself in ctl, under the lock, before it looks in
// the stripes one last time; a release adds its unit to a stripe before it
// reads ctl. So either the waiter finds the unit, or the release sees the
// waiter and hands a unit over under the lock, oldest waiter first.
//
// A stripe's word holds its free units in the low 32 bits and, above them,
// one bit per slot of the stripe, set while the slot is claimed. A slot is
// a place in a small table the Sema's user keeps (ConcurrencyLimit keeps a
// permit record there): TryAcquireSlot takes a unit and claims a slot in
// one CAS, and ReleaseSlot gives both back in one atomic add, so the
// common path finds its record without a pool.
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

// A Sema is a FIFO counting semaphore. The zero Sema has no units; build
// one with New.
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

// line is one stripe of a Sema, on a cache line of its own.
type line struct {
	free atomic.Uint64 // free units (bits 0..31) and claimed slots (bits 32..39)
	_    [56]byte
}

// New returns a Sema holding n units. It panics unless 0 <= n <= MaxUnits.
func New(n int) *Sema {
	if n < 0 || n > MaxUnits {
		panic(fmt.Sprintf("sema.New: n must be between 0 and %d, got %d", MaxUnits, n))
	}
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

// hint picks the caller's stripe; see stripe.Hint.
func (s *Sema) hint() uintptr { return stripe.Hint() }

// take takes a free unit from any stripe, starting with stripe h, and, if
// claim, a free slot of the same stripe in the same CAS. slot is NoSlot
// when it claimed none.
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

// takeUnit is take without a slot.
func (s *Sema) takeUnit(h uintptr) bool {
	_, ok := s.take(h, false)
	return ok
}

// TryAcquire takes a unit if one is free and nobody is queued.
func (s *Sema) TryAcquire() bool {
	return s.ctl.Load() == 0 && s.takeUnit(s.hint())
}

// Slots returns the number of slots the Sema has: slots are numbered from
// 0 to Slots()-1.
func (s *Sema) Slots() int { return len(s.lines) * SlotsPerStripe }

// TryAcquireSlot is TryAcquire that also claims a free slot of the stripe
// it takes the unit from, and returns it (NoSlot when all of that stripe's
// slots are claimed). The claimer has the slot to itself until it gives
// the unit back with ReleaseSlot.
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

// A Watcher hears of the callers that wait in line for a unit, so that the
// Sema's user can report the wait as its own (Waiting in package metrics).
type Watcher interface {
	// Waiting adds delta to the number of callers waiting in line: +1
	// when one queues, -1 when it leaves the queue.
	Waiting(delta int64)
}

// AcquireWatched is Acquire that tells w, unless it is nil, while the
// caller waits in line: Waiting(+1) once it is queued, and Waiting(-1)
// when it leaves the queue, granted a unit or not. A caller that does not
// queue is not counted. The calls to w are made without the lock.
func (s *Sema) AcquireWatched(ctx context.Context, w Watcher) error {
	if s.TryAcquire() {
		return nil
	}
	wt, err := s.enqueue(ctx)
	if wt == nil {
		return err
	}
	if w == nil {
		return s.wait(ctx, wt)
	}
	// A panic in w goes on up to the caller, who then holds nothing: wt
	// leaves the queue, or the unit it was granted goes back, first.
	guard.Undo(func() { w.Waiting(1) }, func() {
		if s.cancel(wt, errWithdrawn) == nil {
			s.Release()
		}
	})
	err = s.wait(ctx, wt)
	guard.Undo(func() { w.Waiting(-1) }, func() {
		if err == nil {
			s.Release()
		}
	})
	return err
}

// wait waits for w to be woken, or withdraws it when ctx ends.
func (s *Sema) wait(ctx context.Context, w *waitq.Waiter) error {
	select {
	case <-w.Ready:
		return w.Err
	case <-ctx.Done():
		return s.cancel(w, ctx.Err())
	}
}

// errWithdrawn withdraws a waiter whose watcher panicked.
var errWithdrawn = errors.New("sema: waiter withdrawn")

// enqueue takes a unit under the lock if nobody is ahead and one is free,
// or queues a waiter. It returns a nil waiter when the outcome is already
// known.
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

// cancel withdraws w after its ctx ended. If w was woken meanwhile, its
// outcome stands: a caller granted a unit as its ctx ended keeps it.
func (s *Sema) cancel(w *waitq.Waiter, ctxErr error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.q.Remove(w) {
		return w.Err
	}
	s.ctl.Add(^uint64(0))
	return ctxErr
}

// Release gives a unit back, to the oldest waiter if there is one. It panics
// if the Sema would hold more units than it was made with, when the
// caller's stripe shows it.
func (s *Sema) Release() {
	if len(s.lines) == 0 {
		panic(overRelease) // the zero Sema holds nothing
	}
	s.give(&s.lines[s.hint()&s.mask], 1, 0)
}

// ReleaseSlot gives back a unit taken with TryAcquireSlot and frees its
// slot; with NoSlot it is Release. It panics if the slot is not claimed, or
// as Release does.
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
// bit, if any, then hands units to waiters if there are any. If it gave
// back a unit the stripe could not have lent or a slot that was not
// claimed, the add is undone and give panics.
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

// handOff gives free units to the waiters, oldest first.
func (s *Sema) handOff() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.q.Len() > 0 && s.takeUnit(0) {
		s.q.Wake(0, nil)
		s.ctl.Add(^uint64(0))
	}
}

// Close fails every queued waiter and every later Acquire with err, which
// must not be nil. Units already held can still be released. Close is
// idempotent; the first err stays.
func (s *Sema) Close(err error) {
	if err == nil {
		panic("sema.Close: err is nil")
	}
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
