package breaker

import (
	"time"

	"github.com/towergo/tower/internal/mono"
)

// numBuckets is the number of buckets of a LastDuration window.
const numBuckets = 10

// A window counts the calls and failures of a closed breaker's recent
// calls, for WithFailureRatio. It is guarded by the breaker's lock.
type window struct {
	ratio    float64
	minCalls int
	calls    int // in the window now
	fails    int

	// LastCalls: the outcomes of the last len(ring) calls, true for a
	// failure, ring[next] the oldest once filled.
	ring []bool
	next int

	// LastDuration: the bucket of a call that ends at t is
	// (t-start)/width; buckets[k%numBuckets] holds bucket k for the last
	// numBuckets values of k up to head.
	width   time.Duration
	start   time.Duration
	head    int64
	buckets [numBuckets]struct{ calls, fails int }
}

func newWindow(o *options) *window {
	if o.window == (Window{}) {
		return nil
	}
	w := &window{ratio: o.ratio, minCalls: o.minCalls, start: mono.Now()}
	if o.window.calls > 0 {
		w.ring = make([]bool, o.window.calls)
	} else {
		w.width = max(o.window.d/numBuckets, 1)
	}
	return w
}

// reset empties the window, at now.
func (w *window) reset(now time.Duration) {
	clear(w.ring)
	w.buckets = [numBuckets]struct{ calls, fails int }{}
	w.calls, w.fails, w.next, w.start, w.head = 0, 0, 0, now, 0
}

// record adds a call that ended at now, and reports whether the window
// now calls for a trip.
func (w *window) record(now time.Duration, failed bool) bool {
	if w.ring != nil {
		if w.calls == len(w.ring) { // full: the oldest call leaves
			w.calls--
			if w.ring[w.next] {
				w.fails--
			}
		}
		w.ring[w.next] = failed
		w.next = (w.next + 1) % len(w.ring)
	} else {
		k := int64((now - w.start) / w.width)
		// Buckets head+1 to k start empty: what they held is older than the
		// window. Past head+numBuckets, every bucket has been emptied.
		for i := w.head + 1; i <= k && i <= w.head+numBuckets; i++ {
			b := &w.buckets[i%numBuckets]
			w.calls -= b.calls
			w.fails -= b.fails
			b.calls, b.fails = 0, 0
		}
		w.head = k // now is read under the lock: k never goes back
		b := &w.buckets[k%numBuckets]
		b.calls++
		if failed {
			b.fails++
		}
	}
	w.calls++
	if failed {
		w.fails++
	}
	return failed && w.calls >= w.minCalls && float64(w.fails)/float64(w.calls) >= w.ratio
}
