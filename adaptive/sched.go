package adaptive

import (
	"math"
	"runtime/metrics"
	"sync"
	"time"
)

// schedHops is how many times a call waits to be scheduled on its way
// through the process, at least: the caller's goroutine is woken with the
// answer, and a connection's writer and reader each are woken once.
const schedHops = 3

// SchedDelay returns a function for [WithOwnDelay] that measures the Go
// scheduler's part of a call's latency: the mean time the process's
// goroutines waited to run, from runtime/metrics' /sched/latencies, since
// the function was last called, times the three wake-ups a call's path has
// at least (its caller's, and a connection's writer's and reader's). When
// the process has CPU to spare this is microseconds; when its goroutines
// queue for the CPU it is what they queue, and a limit should not read it
// as the dependency's overload. Each call of SchedDelay returns a function
// with its own reading: give each limiter its own.
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

// read takes a reading and returns the counts added since the last one,
// and the histogram's bucket boundaries.
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

// histMean returns the mean of a histogram of counts over buckets (whose
// boundaries are one more than the counts), each count at its bucket's
// midpoint: an open bucket's count at its finite boundary. It is 0 with
// no count.
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
