package bench

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// floorCall has the size and the pointers of timeout's call record, the
// context a Timeout allocates per call: 48 bytes.
type floorCall struct {
	flags    atomic.Uint32
	t        *int
	held     any
	deadline time.Duration
	_        atomic.Pointer[int] // the standard context made once Done is asked for: here for its size
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
			c.flags.CompareAndSwap(0, 1)
			c.held = ctx
			c.deadline = time.Since(floorBase) + time.Second
			if time.Since(floorBase) >= c.deadline {
				late++
			}
			c.flags.Or(2)
		}
		sink += late
	})
}
