package sema

import (
	"math/bits"
	"testing"
)

// The words are laid out as the doc says: ctl counts waiters in its low 32
// bits, below the closed bit; a stripe word holds its free units in its
// low 32 bits, every unit of the largest Sema fitting in one stripe, and a
// bit per slot above them; NoSlot is no slot's number.
func TestWordLayout(t *testing.T) {
	if waiterMask != 0xFFFF_FFFF || waiterMask&closedBit != 0 {
		t.Errorf("waiterMask %#x, want bits 0..31, clear of closedBit", uint64(waiterMask))
	}
	if unitMask != 0xFFFF_FFFF || unitMask+1 != slotBit0 {
		t.Errorf("unitMask %#x, want bits 0..31, just below slotBit0", uint64(unitMask))
	}
	if MaxUnits != unitMask {
		t.Errorf("MaxUnits %d, want %d: every unit fits in one stripe's count", MaxUnits, uint64(unitMask))
	}
	if bits.OnesCount64(allSlots) != SlotsPerStripe || bits.TrailingZeros64(allSlots) != 0 {
		t.Errorf("allSlots %#b, want the low %d bits", allSlots, SlotsPerStripe)
	}
	if uint64(allSlots)*slotBit0&closedBit != 0 {
		t.Errorf("a stripe's slot bits reach bit 63")
	}
	if NoSlot != -1 {
		t.Errorf("NoSlot = %d, want -1, below every slot's number", NoSlot)
	}
}

// A Sema is striped only when each stripe gets at least unitsPerStripe
// units, and never more than maxStripes: the count of stripes doubles at
// exactly 2·stripes·unitsPerStripe units, and the units are spread with
// the remainder on the first stripes.
func TestStripes(t *testing.T) {
	for _, tt := range []struct{ n, stripes int }{
		{0, 1}, {31, 1}, {32, 2}, {63, 2}, {64, 4}, {255, 8}, {256, 16}, {511, 16}, {512, 16}, {MaxUnits, 16},
	} {
		s := New(tt.n)
		if got := len(s.lines); got != tt.stripes {
			t.Errorf("New(%d): %d stripes, want %d", tt.n, got, tt.stripes)
		}
		total := uint64(0)
		for i := range s.lines {
			free := s.lines[i].free.Load() & unitMask
			if want := uint64(tt.n/tt.stripes + btoi(i < tt.n%tt.stripes)); free != want {
				t.Errorf("New(%d): stripe %d holds %d units, want %d", tt.n, i, free, want)
			}
			total += free
		}
		if total != uint64(tt.n) {
			t.Errorf("New(%d): %d units in all", tt.n, total)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
