package adaptive

import (
	"math/bits"
	"testing"
)

// The gate's state word is laid out as its doc says: 25 bits of requests
// in flight, then 25 of limit, the wait bit at 50 and the grant count from
// bit 51; the fields do not overlap, the largest limit fits, and a grant
// adds one in flight and one to the count.
func TestGateStateLayout(t *testing.T) {
	if bits.OnesCount64(inflightMask) != 25 || inflightMask != 1<<limitShift-1 {
		t.Errorf("inflightMask %#x, want bits 0..24", uint64(inflightMask))
	}
	if bits.OnesCount64(limitMask) != 25 || limitMask != 1<<25-1 {
		t.Errorf("limitMask %#x, want 25 bits", uint64(limitMask))
	}
	if uint64(inflightMask|limitMask<<limitShift|waitBit) != 1<<seqShift-1 ||
		inflightMask&(limitMask<<limitShift) != 0 || (limitMask<<limitShift)&waitBit != 0 {
		t.Errorf("fields %#x, %#x, %#x: want them to tile bits 0..50", uint64(inflightMask), uint64(limitMask<<limitShift), uint64(waitBit))
	}
	if MaxLimit > limitMask || MaxLimit > inflightMask {
		t.Errorf("MaxLimit %d does not fit", MaxLimit)
	}
	if grant&inflightMask != 1 || grant>>seqShift != 1 || grant&^(inflightMask|1<<seqShift) != 0 {
		t.Errorf("grant %#x, want one in flight and one grant", uint64(grant))
	}
}
