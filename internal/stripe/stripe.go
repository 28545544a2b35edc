// Package stripe is a counter that goroutines on many CPUs add to at once
// without contending for one cache line: its value is spread over lines,
// and each goroutine adds to the line its stack's address picks.
package stripe

import (
	"sync/atomic"
	"unsafe"
)

const lines = 16 // cache lines a counter is spread over

// Int64 is a striped int64 counter. The zero Int64 is zero and ready to use.
// It is safe for concurrent use and must not be copied after first use.
type Int64 struct {
	l [lines]struct {
		v atomic.Int64
		_ [56]byte
	}
}

// Add adds delta to the counter.
func (c *Int64) Add(delta int64) { c.l[Hint()%lines].v.Add(delta) }

// Load returns the counter's value: the sum of its lines. While additions
// are under way it may be off by those in flight, even below zero.
func (c *Int64) Load() int64 {
	var n int64
	for i := range c.l {
		n += c.l[i].v.Load()
	}
	return n
}

// Hint returns a number that stays the same for a goroutine and differs
// between goroutines running at the same time: its stack's address in
// units of 2 KiB, the smallest stack. Pick a stripe with Hint() % n.
func Hint() uintptr {
	var b byte
	return uintptr(unsafe.Pointer(&b)) >> 11
}
