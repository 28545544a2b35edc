package live

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Latencies are kept in buckets of a base-2 logarithmic scale with
// subBuckets linear steps per power of two: a bucket is at most 1/16 of
// its lower bound wide, so a quantile read off it is within about 6% of
// the true one. The scale starts at 2^minExp ns (about 1µs; anything
// shorter is in the first bucket) and ends at 2^maxExp ns (about 137s;
// anything longer is in the last).
const (
	subBits    = 4
	subBuckets = 1 << subBits
	minExp     = 10
	maxExp     = 37
	numBuckets = (maxExp - minExp + 1) * subBuckets
)

// A Histogram counts latencies in logarithmic buckets, for quantiles over
// an interval: [Histogram.Snapshot] at the interval's two ends, and
// [Counts.Since] the earlier one. Observe is one atomic addition and
// allocates nothing. The zero Histogram is ready to use; it is safe for
// concurrent use and must not be copied after first use.
type Histogram struct {
	buckets [numBuckets]atomic.Uint64
}

// Observe counts one latency.
func (h *Histogram) Observe(d time.Duration) {
	h.buckets[bucketOf(d)].Add(1)
}

// bucketOf returns the bucket of d.
func bucketOf(d time.Duration) int {
	ns := uint64(max(d, 0))
	if ns < 1<<minExp {
		return 0
	}
	exp := bits.Len64(ns) - 1 // 2^exp <= ns < 2^(exp+1)
	if exp > maxExp {
		return numBuckets - 1
	}
	sub := int(ns>>(exp-subBits)) & (subBuckets - 1)
	return (exp-minExp)*subBuckets + sub
}

// upperBound returns the largest latency bucket i holds.
func upperBound(i int) time.Duration {
	exp := i/subBuckets + minExp
	sub := uint64(i % subBuckets)
	return time.Duration((1<<exp)+(sub+1)<<(exp-subBits)) - 1
}

// Counts are a Histogram's buckets at one time.
type Counts [numBuckets]uint64

// Snapshot returns the counts now. Each bucket is read atomically; a
// latency observed meanwhile may or may not be in it.
func (h *Histogram) Snapshot() *Counts {
	var c Counts
	for i := range h.buckets {
		c[i] = h.buckets[i].Load()
	}
	return &c
}

// Since returns the counts of the latencies observed between prev and c,
// both snapshots of one Histogram, prev the earlier; a nil prev is the
// empty Histogram.
func (c *Counts) Since(prev *Counts) *Counts {
	d := *c
	if prev != nil {
		for i := range d {
			d[i] -= prev[i]
		}
	}
	return &d
}

// Total returns the number of latencies counted.
func (c *Counts) Total() uint64 {
	var n uint64
	for _, v := range c {
		n += v
	}
	return n
}

// Quantile returns the latency below which the share q (0 to 1) of the
// counted ones fall, as the upper bound of the bucket it is in, or 0 if
// none is counted.
func (c *Counts) Quantile(q float64) time.Duration {
	total := c.Total()
	if total == 0 {
		return 0
	}
	rank := uint64(q*float64(total) + 0.5)
	rank = min(max(rank, 1), total)
	var seen uint64
	for i, v := range c {
		seen += v
		if seen >= rank {
			return upperBound(i)
		}
	}
	return upperBound(numBuckets - 1)
}
