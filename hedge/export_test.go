package hedge

import "time"

// MockLatencies records latencies, in milliseconds, in the histogram h
// reads its delay from, as tower's Hedge::new_with_mock_latencies does,
// and returns h.
func MockLatencies[Req, Res any](h *Hedge[Req, Res], ms ...uint64) *Hedge[Req, Res] {
	h.histo.preload(ms)
	return h
}

// preload adds latencies in milliseconds to the read histogram, as tower's
// new_with_mock_latencies does.
func (r *rotating) preload(ms []uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.maybeRotate(time.Now())
	for _, v := range ms {
		r.read.record(v)
	}
	r.cached = false
}

// Histogram is the latency histogram.
type Histogram = histogram

func (h *histogram) Record(ms uint64)          { h.record(ms) }
func (h *histogram) Quantile(q float64) uint64 { return h.quantile(q) }
func (h *histogram) Total() uint64             { return h.total }
func (h *histogram) Clear()                    { h.clear() }
func (h *histogram) Allocated() (ranges int) {
	for _, c := range h.counts {
		if c != nil {
			ranges++
		}
	}
	return ranges
}

// Bounds returns the lowest and highest latency counted with ms.
func Bounds(ms uint64) (lo, hi uint64) { return bounds(slot(min(ms, maxLatency))) }

// MaxLatency is the longest latency the histogram tells apart.
const MaxLatency = maxLatency

// Rotating is the pair of histograms.
type Rotating = rotating

func NewRotating(period time.Duration, q float64) *rotating { return newRotating(period, q) }

func (r *rotating) Record(d time.Duration) { r.record(d, time.Now()) }

func (r *rotating) Delay(minPoints uint64) (time.Duration, bool) {
	d, _, ok := r.delayFor(time.Now(), minPoints)
	return d, ok
}

// Median returns the latency a hedge is expected to take.
func (r *rotating) Median(minPoints uint64) time.Duration {
	_, m, _ := r.delayFor(time.Now(), minPoints)
	return m
}

func (r *rotating) Preload(ms ...uint64) { r.preload(ms) }

// Totals returns how many latencies the read and write histograms hold.
func (r *rotating) Totals() (read, write uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.maybeRotate(time.Now())
	return r.read.total, r.write.total
}
