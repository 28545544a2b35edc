package adaptive

import (
	"math"
	"runtime/metrics"
	"slices"
	"sync"
	"time"
)

// SchedDelay returns a function for [WithOwnDelay] that measures the Go
// scheduler's part of a call's latency: the mean time the process's
// goroutines waited to run since the function's last call (from
// runtime/metrics' /sched/latencies), times the three wake-ups a call
// has at least. It is microseconds while the process has CPU to spare.
// Each function keeps its own reading: give each limiter its own. It is
// safe for concurrent use.
func SchedDelay() func() time.Duration {
	s := &schedReader{sample: []metrics.Sample{{Name: "/sched/latencies:seconds"}}}
	s.delay() // the reading to measure from
	return s.delay
}

type schedReader struct {
	mu     sync.Mutex
	sample []metrics.Sample
	last   []uint64 // bucket counts at the last reading
}

func (s *schedReader) delay() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	metrics.Read(s.sample)
	if s.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0 // not in this runtime: no delay measured
	}
	h := s.sample[0].Value.Float64Histogram()
	delta := slices.Clone(h.Counts)
	for i := range min(len(s.last), len(delta)) {
		delta[i] -= s.last[i]
	}
	s.last = append(s.last[:0], h.Counts...)
	// 3 wake-ups: the caller's goroutine, a connection's writer and reader.
	return time.Duration(histMean(delta, h.Buckets) * 3 * float64(time.Second))
}

// histMean returns the mean of a histogram, each count at its bucket's
// midpoint (an open bucket's at its finite boundary), or 0 if empty.
func histMean(counts []uint64, buckets []float64) float64 {
	var n uint64
	var sum float64
	for i, c := range counts {
		lo, hi := max(buckets[i], 0), buckets[i+1] // latencies: -Inf is 0
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
