package throttle

import (
	"sync"
	"time"

	"github.com/towergo/tower/internal/mono"
)

// numBuckets is the number of buckets a window is kept as.
const numBuckets = 120

// window counts requests and accepts over a sliding window of buckets of
// a fixed width from the throttle's creation: bucket b spans
// [start+b·width, start+(b+1)·width), and while the clock is in bucket n
// the window holds buckets n−len(slots)+1 to n. The totals are the sum of
// the slots; mu guards both.
type window struct {
	width time.Duration // of a bucket
	start time.Duration // mono reading at which bucket 0 starts

	mu                sync.Mutex
	cur               int64 // the bucket the window was last moved to
	requests, accepts int64
	slots             []slot // bucket b in slots[b%len(slots)]
}

type slot struct{ requests, accepts int64 }

// init sets w up as a window of length d, starting now.
func (w *window) init(d time.Duration) {
	n := min(d, numBuckets)
	w.width = d / n
	w.slots = make([]slot, n)
	w.start = mono.Now()
}

// lock locks w and moves it to the bucket the clock is in now.
func (w *window) lock() {
	b := int64((mono.Now() - w.start) / w.width)
	w.mu.Lock()
	w.advance(b)
}

// advance moves the window to bucket b, emptying the buckets that leave;
// a b before cur (a clock read before another caller moved the window)
// changes nothing. w.mu must be held.
func (w *window) advance(b int64) {
	n := int64(len(w.slots))
	for next := w.cur + 1; next <= min(b, w.cur+n); next++ { // after n steps every slot is empty
		s := &w.slots[next%n] // bucket next−n, leaving as bucket next starts
		w.requests -= s.requests
		w.accepts -= s.accepts
		*s = slot{}
	}
	w.cur = max(b, w.cur)
}

// add counts one request now, and one accept as well if accepted.
func (w *window) add(accepted bool) {
	w.lock()
	s := &w.slots[w.cur%int64(len(w.slots))]
	if accepted {
		w.accepts++
		s.accepts++
	}
	w.requests++
	s.requests++
	w.mu.Unlock()
}

// counts returns the requests and accepts in the window now.
func (w *window) counts() (requests, accepts int64) {
	w.lock()
	requests, accepts = w.requests, w.accepts
	w.mu.Unlock()
	return requests, accepts
}
