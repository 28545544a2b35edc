package throttle

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower/internal/mono"
)

// numBuckets is the number of buckets a window is kept as.
const numBuckets = 120

// window counts requests and accepts over a sliding window of buckets of
// a fixed width from the throttle's creation: bucket b spans
// [start+b·width, start+(b+1)·width), and while the clock is in bucket n
// the window holds buckets n−len(slots)+1 to n.
//
// The running totals hold the sum of the buckets in the window, so a
// decision reads two words. A count is added to the total before its
// slot, and a slot leaving the window is emptied with a Swap and what it
// held taken off the total, so the total is never below the sum of the
// slots. The first caller to find the clock past cur moves the window on
// under mu; no goroutine runs.
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

// init sets w up as a window of length d, starting now.
func (w *window) init(d time.Duration) {
	n := min(d, numBuckets)
	w.width = d / n
	w.slots = make([]slot, n)
	w.start = mono.Now()
}

// bucket returns the bucket the clock is in now, moving the window to it
// if need be.
func (w *window) bucket() int64 {
	b := int64((mono.Now() - w.start) / w.width)
	if b != w.cur.Load() { // b < cur only for a caller who read the clock before another moved the window
		w.advance(b)
	}
	return b
}

// advance moves the window to bucket b, emptying the buckets that leave.
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

// add counts one request now, and one accept as well if accepted. The
// accept is added before its request, and counts reads requests first, so
// a concurrent decision may see an accept without its request, which
// lowers the probability, but never a request without its accept, which
// would raise it.
func (w *window) add(accepted bool) {
	s := &w.slots[w.bucket()%int64(len(w.slots))]
	if accepted {
		w.accepts.Add(1) // the total first: see window
		s.accepts.Add(1)
	}
	w.requests.Add(1)
	s.requests.Add(1)
}

// counts returns the requests and accepts in the window now.
func (w *window) counts() (requests, accepts int64) {
	w.bucket()
	requests = w.requests.Load() // first: a request is added after its accept
	return requests, w.accepts.Load()
}
