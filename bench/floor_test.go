package bench

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// floorCall has the size and the pointers of timeout's call record, the
// context a Timeout allocates per call.
type floorCall struct {
	ticket atomic.Uint64
	t      *int
	inner  any
	token  uint64
	parent context.Context
	start  time.Duration
	limit  time.Duration
	wall   atomic.Int64
	flags  atomic.Uint32
	std    *int
}

var (
	floorBase = time.Now()
	floorSink *floorCall
	floorT    int
)

// BenchmarkFloor/timeout is not a stack: it does only what any Timeout
// that discards late responses must do per call, without a service or
// middleware around it: allocate the call's context, redeem the permit
// (one CAS), read the monotonic clock at the start and at the end, and mark
// the context ended (one atomic OR). bench/README.md compares it with
// BenchmarkTower/timeout.
func BenchmarkFloor(b *testing.B) {
	b.Run("timeout", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		var late int
		for b.Loop() {
			c := &floorCall{t: &floorT}
			floorSink = c
			c.ticket.CompareAndSwap(0, 1)
			c.parent, c.limit = ctx, time.Second
			c.start = time.Since(floorBase)
			if time.Since(floorBase)-c.start >= c.limit {
				late++
			}
			c.flags.Or(1)
		}
		sink += late
	})
}
