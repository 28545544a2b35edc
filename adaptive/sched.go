package adaptive

import (
	"math"
	"runtime/metrics"
	"sync"
	"time"
)

// schedHops is the least number of times a call waits to be scheduled:
// the caller's goroutine, and a connection's writer and reader.
const schedHops = 3

// SchedDelay returns a function for [WithOwnDelay] that measures the Go
// scheduler's part of a call's latency: the mean time the process's
// goroutines waited to run since the function's last call (from
// runtime/metrics' /sched/latencies), times the three wake-ups a call
// has at least. It is microseconds while the process has CPU to spare.
// Each function keeps its own reading: give each limiter its own. It is
// safe for concurrent use.
func SchedDelay() func() time.Duration {
	s := &schedReader{sample: []metrics.Sample{{Name: "/sched/latencies:seconds"}}}
	s.read() // the reading to measure from
	return s.delay
}

// schedReader keeps the last reading of the scheduling-latency histogram.
type schedReader struct {
	mu     sync.Mutex
	sample []metrics.Sample
	last   []uint64 // bucket counts at the last reading
}

// read returns the counts added since the last reading, and the bucket
// boundaries.
func (s *schedReader) read() (delta []uint64, buckets []float64) {
	metrics.Read(s.sample)
	if s.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil, nil // not in this runtime: no delay measured
	}
	h := s.sample[0].Value.Float64Histogram()
	delta = make([]uint64, len(h.Counts))
	for i, c := range h.Counts {
		if i < len(s.last) {
			delta[i] = c - s.last[i]
		} else {
			delta[i] = c
		}
	}
	s.last = append(s.last[:0], h.Counts...)
	return delta, h.Buckets
}

// delay is the function SchedDelay returns.
func (s *schedReader) delay() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	delta, buckets := s.read()
	return time.Duration(histMean(delta, buckets) * schedHops * float64(time.Second))
}

// histMean returns the mean of a histogram, each count at its bucket's
// midpoint (an open bucket's at its finite boundary), or 0 if empty.
func histMean(counts []uint64, buckets []float64) float64 {
	var n uint64
	var sum float64
	for i, c := range counts {
		if c == 0 {
			continue
		}
		lo, hi := buckets[i], buckets[i+1]
		if math.IsInf(lo, -1) {
			lo = 0
		}
		if math.IsInf(hi, 1) {
			hi = lo
		}
		n += c
		sum += float64(c) * (lo + hi) / 2
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}
