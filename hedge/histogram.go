package hedge

import (
	"math"
	"math/bits"
	"sync"
	"time"
)

// The latency histogram is an HdrHistogram of whole milliseconds with 3
// significant digits. Latencies from 0 to 2047ms have a slot each; above,
// each power of two [2^k, 2^(k+1)) is split into 1024 slots of 2^(k-10)ms.
// A range's slots are allocated when a latency first falls in it.
const (
	subBits    = 11
	subCount   = 1 << subBits // slots of the first range, 0 to 2047ms
	subHalf    = subCount / 2 // slots of each range above
	ranges     = 12           // [0, 2^11), then [2^k, 2^(k+1)) for k = 11..21
	maxLatency = 1<<(subBits+ranges-1) - 1
)

// histogram counts latencies in milliseconds. Its zero value is empty and
// ready to use; it is not safe for concurrent use.
type histogram struct {
	counts [ranges][]uint64 // counts[0] has subCount slots, the others subHalf
	total  uint64
}

// slot returns the range and the slot within it that count v.
func slot(v uint64) (r, s int) {
	if v < subCount {
		return 0, int(v)
	}
	shift := bits.Len64(v) - subBits // v is in [2^(10+shift), 2^(11+shift))
	return shift, int(v>>shift) - subHalf
}

// bounds returns the lowest and highest latency counted in slot s of range
// r.
func bounds(r, s int) (lo, hi uint64) {
	if r == 0 {
		return uint64(s), uint64(s)
	}
	lo = uint64(s+subHalf) << r
	return lo, lo + 1<<r - 1
}

func (h *histogram) record(ms uint64) {
	r, s := slot(min(ms, maxLatency))
	if h.counts[r] == nil {
		n := subHalf
		if r == 0 {
			n = subCount
		}
		h.counts[r] = make([]uint64, n)
	}
	h.counts[r][s]++
	h.total++
}

// quantile returns the latency at quantile q in [0, 1]: the highest
// latency of the first slot at which the count reaches ⌈q·total⌉ (at least
// 1, and ignoring floating-point noise below one millionth); for q = 0,
// the lowest latency of the first slot counted. An empty histogram gives 0.
func (h *histogram) quantile(q float64) uint64 {
	if h.total == 0 {
		return 0
	}
	want := uint64(math.Ceil(q*float64(h.total) - 1e-6))
	want = max(want, 1)
	var seen uint64
	for r, counts := range h.counts {
		for s, n := range counts {
			if seen += n; n != 0 && seen >= want {
				lo, hi := bounds(r, s)
				if q == 0 {
					return lo
				}
				return hi
			}
		}
	}
	return maxLatency // not reached: the counts add up to total
}

func (h *histogram) clear() {
	for _, counts := range h.counts {
		clear(counts)
	}
	h.total = 0
}

// rotating is tower's RotatingHistogram: reads come from the previous
// period's histogram, writes go to the current one's. At each access after
// one full period the histograms swap and the new current one is cleared;
// after two or more, both are cleared. It is safe for concurrent use.
type rotating struct {
	mu          sync.Mutex
	read, write *histogram
	last        time.Time // the last rotation, a whole number of periods after the first
	period      time.Duration
	q           float64
	delay       time.Duration // the quantile of read, if cached
	median      time.Duration // the median of read, if cached
	cached      bool          // until the next rotation
}

func newRotating(period time.Duration, q float64) *rotating {
	return &rotating{read: new(histogram), write: new(histogram), last: time.Now(), period: period, q: q}
}

// maybeRotate rotates if a period has passed. r.mu must be held.
func (r *rotating) maybeRotate(now time.Time) {
	delta := max(now.Sub(r.last), 0)
	n := delta / r.period
	if n == 0 {
		return
	}
	if n == 1 {
		r.read, r.write = r.write, r.read
		r.write.clear()
	} else {
		r.read.clear()
		r.write.clear()
	}
	r.last = r.last.Add(n * r.period)
	r.cached = false
}

// delayFor returns the read histogram's quantile as a delay, its median as
// the latency a hedge is likely to take, and whether the read histogram
// has at least minPoints latencies, as of now.
func (r *rotating) delayFor(now time.Time, minPoints uint64) (delay, median time.Duration, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.maybeRotate(now)
	if r.read.total < minPoints {
		return 0, 0, false
	}
	if !r.cached {
		r.delay = time.Duration(r.read.quantile(r.q)) * time.Millisecond
		r.median = time.Duration(r.read.quantile(0.5)) * time.Millisecond
		r.cached = true
	}
	return r.delay, r.median, true
}

// record adds a latency to the write histogram, in milliseconds rounded
// up, as of now: the instant the latency ended.
func (r *rotating) record(d time.Duration, now time.Time) {
	const unit = uint64(time.Millisecond)
	ms := (uint64(max(d, 0)) + unit - 1) / unit
	r.mu.Lock()
	defer r.mu.Unlock()
	r.maybeRotate(now)
	r.write.record(ms)
}
