package sema

import (
	"sync"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower/towertest"
)

// A unit comes with a slot of its stripe while the stripe has one free;
// after that, units come without. Every slot is claimed once at a time.
func TestTryAcquireSlotClaimsEachSlotOnce(t *testing.T) {
	s := New(SlotsPerStripe + 2) // one stripe: more units than slots
	if got := s.Slots(); got != SlotsPerStripe {
		t.Fatalf("got Slots() = %d, want %d", got, SlotsPerStripe)
	}
	claimed := map[int]bool{}
	for range SlotsPerStripe {
		slot, ok := s.TryAcquireSlot()
		if !ok || slot == NoSlot || claimed[slot] {
			t.Fatalf("got slot %d, %v, want a new slot (claimed: %v)", slot, ok, claimed)
		}
		claimed[slot] = true
	}
	for range 2 {
		if slot, ok := s.TryAcquireSlot(); !ok || slot != NoSlot {
			t.Fatalf("with every slot claimed: got %d, %v, want NoSlot, true", slot, ok)
		}
	}
	if slot, ok := s.TryAcquireSlot(); ok {
		t.Fatalf("with no unit free: got %d, true, want false", slot)
	}
	s.ReleaseSlot(3)
	if slot, ok := s.TryAcquireSlot(); !ok || slot != 3 {
		t.Fatalf("after ReleaseSlot(3): got %d, %v, want 3, true", slot, ok)
	}
	for slot := range claimed {
		s.ReleaseSlot(slot)
	}
	s.ReleaseSlot(NoSlot)
	s.ReleaseSlot(NoSlot)
	checkCounts(t, s, SlotsPerStripe+2, 0)
	if got := s.lines[0].free.Load() &^ unitMask; got != 0 {
		t.Errorf("slots still claimed after every release: %#x", got)
	}
}

// A slot given back twice, or one never claimed, panics and leaves the
// counts as they were.
func TestReleaseSlotNotClaimedPanics(t *testing.T) {
	s := New(4)
	slot, _ := s.TryAcquireSlot()
	s.ReleaseSlot(slot)
	towertest.Panics(t, unheldSlot, func() { s.ReleaseSlot(slot) })
	towertest.Panics(t, unheldSlot, func() { s.ReleaseSlot(s.Slots()) })
	towertest.Panics(t, unheldSlot, func() { s.ReleaseSlot(-2) })
	checkCounts(t, s, 4, 0)
	if got := s.lines[0].free.Load(); got != 4 {
		t.Errorf("got stripe word %#x, want 4", got)
	}
}

// TryAcquireSlot does not overtake a queued waiter, and ReleaseSlot hands
// the unit to the oldest waiter, freeing the slot all the same.
func TestSlotsAndWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(1)
		slot, ok := s.TryAcquireSlot()
		if !ok || slot == NoSlot {
			t.Fatalf("got %d, %v, want a slot", slot, ok)
		}
		a := goAcquire(t.Context(), s)
		if _, ok := s.TryAcquireSlot(); ok {
			t.Fatal("TryAcquireSlot overtook a queued waiter")
		}
		s.ReleaseSlot(slot)
		if err := a.result(); err != nil {
			t.Fatalf("the waiter got %v, want nil", err)
		}
		checkCounts(t, s, 0, 0)
		s.Release()
		if got, ok := s.TryAcquireSlot(); !ok || got != slot {
			t.Errorf("got %d, %v, want the freed slot %d", got, ok, slot)
		}
	})
}

// Goroutines claiming and freeing slots at once never hold the same slot
// together; the race detector checks the table it guards.
func TestSlotsExclusiveUnderContention(t *testing.T) {
	s := New(MaxUnits)
	owner := make([]int, s.Slots()) // written only by the slot's claimer
	var wg sync.WaitGroup
	for g := 1; g <= 8; g++ {
		wg.Go(func() {
			for range 2000 {
				slot, ok := s.TryAcquireSlot()
				if !ok {
					panic("no unit free in a Sema of MaxUnits")
				}
				if slot == NoSlot {
					s.ReleaseSlot(slot)
					continue
				}
				if owner[slot] != 0 {
					panic("a slot claimed twice at once")
				}
				owner[slot] = g
				owner[slot] = 0
				s.ReleaseSlot(slot)
			}
		})
	}
	wg.Wait()
	checkCounts(t, s, MaxUnits, 0)
}
