package throttle

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower/internal/mono"
)

// numBuckets is the number of buckets a window is kept as: one second each
// for the default window of two minutes.
const numBuckets = 120

// window counts requests and accepts over a sliding window, kept as
// buckets of a fixed width that start at the throttle's creation: bucket b
// spans [start+b·width, start+(b+1)·width). While the clock is in bucket
// n, the window holds buckets n−len(slots)+1 to n: a count leaves it when
// the bucket it fell in is len(slots) buckets old, between window−width
// and window after it was made.
//
// The running totals hold the sum of the buckets in the window, so that a
// decision reads two words rather than summing the buckets. Each count is
// added to the total first and to its bucket's slot next; a slot that
// leaves the window is emptied with a Swap and what it held is taken off
// the total. So the total is never below the sum of the slots, nor below
// zero: a count added to a slot that was being emptied either goes with
// it, both off the total and the slot, or stays in the slot, which holds a
// newer bucket by then (a count made by a caller who read the clock a
// whole window ago lands in the current bucket, which is harmless).
//
// Buckets leave the window lazily: the first caller that finds the clock
// in a bucket past cur moves the window on, under mu, which is taken once
// per bucket width at most, never per request. No goroutine runs.
type window struct {
	width time.Duration // of a bucket
	start time.Duration // mono reading at which bucket 0 starts

	requests, accepts atomic.Int64 // running totals of the buckets in the window

	cur   atomic.Int64 // the bucket the window was last moved to
	mu    sync.Mutex   // serializes moving the window
	slots []slot       // bucket b in slots[b%len(slots)]
}

// slot holds the counts of one bucket.
type slot struct {
	requests, accepts atomic.Int64
}

// init sets w up as a window of length d, starting now: numBuckets buckets
// of d/numBuckets, or d buckets of 1ns if d is shorter than numBuckets
// nanoseconds.
func (w *window) init(d time.Duration) {
	n := min(d, numBuckets)
	w.width = d / n
	w.slots = make([]slot, n)
	w.start = mono.Now()
}

// bucket returns the bucket the clock is in now, having moved the window
// to it if need be.
func (w *window) bucket() int64 {
	b := int64((mono.Now() - w.start) / w.width)
	if b != w.cur.Load() { // b < cur only for a caller who read the clock before another moved the window
		w.advance(b)
	}
	return b
}

// advance moves the window to bucket b: the buckets that leave it are
// emptied and taken off the totals.
func (w *window) advance(b int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	cur := w.cur.Load()
	n := int64(len(w.slots))
	steps := min(b-cur, n) // after n steps every slot is empty
	for next := cur + 1; steps > 0; next, steps = next+1, steps-1 {
		s := &w.slots[next%n] // bucket next−n, leaving as bucket next starts
		w.requests.Add(-s.requests.Swap(0))
		w.accepts.Add(-s.accepts.Swap(0))
	}
	w.cur.Store(max(b, cur))
}

// add counts one request now, and one accept as well if accepted.
//
// The accept is added before its request, and counts reads the requests
// before the accepts (advance takes requests off first, too): a decision
// made while another request is being counted, or a bucket leaves, may see
// an accept whose request it does not see, which lowers the probability
// it computes, but never a request without its accept, which would raise
// it. With the opposite order, a caller that read the window while the
// first request was being counted saw 1 request and 0 accepts and was
// rejected with probability 1/2, though the backend had refused nothing.
func (w *window) add(accepted bool) {
	s := &w.slots[w.bucket()%int64(len(w.slots))]
	if accepted {
		w.accepts.Add(1) // the total first: see window
		s.accepts.Add(1)
	}
	w.requests.Add(1)
	s.requests.Add(1)
}

// counts returns the requests and accepts in the window now. The accepts
// may include some of requests not counted yet (see add), never fewer.
func (w *window) counts() (requests, accepts int64) {
	w.bucket()
	requests = w.requests.Load() // first: a request is added after its accept
	return requests, w.accepts.Load()
}
