package adaptive

import (
	"context"
	"errors"
	"math"
	"math/bits"
	"time"

	"github.com/towergo/tower/internal/mono"
)

// maxStride bounds the calls per timed call.
const maxStride = 64

// window is what the current window has seen so far, and the algorithm
// that moves the limit when it ends. The gate's lock guards it.
type window struct {
	alg        Algorithm
	limit      float64 // the algorithm's, within the bounds; the limit in force is its floor
	min, max   int
	length     time.Duration
	minSamples int

	start         time.Duration // mono reading
	timed         int
	dropped       int
	sum, least    time.Duration
	maxInFlight   int
	reportedLimit int // the limit last told to the sink
	sinceStride   int // calls observed since the stride last changed
}

// timed reports whether to time the call of grant number seq: one grant
// in stride. The number comes with the grant's atomic step, so the choice
// costs no atomic operation of its own. (A random pick, with math/rand/v2's
// per-thread generator, cost a sixth of the uncontended request path, its
// refills included.)
func (g *gate) timed(seq uint64) bool {
	s := uint64(g.stride.Load())
	return seq&(s-1) == 0
}

// outcome of a call, for the window.
type outcome uint8

const (
	answered outcome = iota // a response, or an error that is not a drop
	drop
	ignored // cancelled by its caller, or panicked: says nothing of the service
)

// classify returns the outcome of a call that returned err.
func (g *gate) classify(err error) outcome {
	if err == nil {
		return answered
	}
	if g.dropped(err) {
		return drop
	}
	if errors.Is(err, context.Canceled) {
		return ignored
	}
	return answered
}

// observe records a timed or dropped call that ended at end, having taken
// latency (if answered), with inflight in flight, and ends the window if
// it is due. It returns the change of the limit, for the sink.
func (g *gate) observe(end, latency time.Duration, o outcome, inflight int) (delta int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	w := &g.w
	switch o {
	case drop:
		w.dropped++
	case answered:
		if w.timed == 0 || latency < w.least {
			w.least = latency
		}
		w.timed++
		w.sum += latency
	}
	w.maxInFlight = max(w.maxInFlight, inflight)
	if w.sinceStride++; w.sinceStride >= 8*w.minSamples {
		// Far more timed calls than the window needs: time fewer.
		w.sinceStride = 0
		g.stride.Store(min(2*g.stride.Load(), maxStride))
	}
	if end-w.start < w.length || (w.timed < w.minSamples && w.dropped == 0) {
		return 0
	}
	return g.closeLocked(end)
}

// closeLocked ends the window at end: the algorithm moves the limit, and a
// new window starts.
func (g *gate) closeLocked(end time.Duration) int {
	w := &g.w
	s := Sample{
		Dropped:     w.dropped,
		Timed:       w.timed,
		MinLatency:  w.least,
		MaxInFlight: w.maxInFlight,
		AtMin:       int(w.limit) <= w.min, // the limit moves only when a window ends
		Elapsed:     end - w.start,
	}
	if w.timed > 0 {
		s.MeanLatency = w.sum / time.Duration(w.timed)
	}
	w.start = end
	w.timed, w.dropped, w.sum, w.least, w.maxInFlight = 0, 0, 0, 0, 0
	g.stride.Store(strideFor(s.Timed*int(g.stride.Load())+s.Dropped, w.minSamples))
	w.sinceStride = 0

	next := w.alg.Update(w.limit, s)
	if math.IsNaN(next) || math.IsInf(next, 0) {
		next = w.limit
	}
	w.limit = min(max(next, float64(w.min)), float64(w.max))
	n := int(w.limit)
	old := w.reportedLimit
	w.reportedLimit = n
	g.setLimitLocked(n)
	return n - old
}

// strideFor returns the stride for a window after one that saw about
// calls calls (timed ones times the stride, and the drops): a
// power of two that leaves about 4·minSamples calls timed in a window like
// it, between 1 and maxStride. At low rates every call is timed; at high
// ones the clock is read for few.
func strideFor(calls, minSamples int) uint32 {
	n := calls / (4 * minSamples)
	if n <= 1 {
		return 1
	}
	return min(uint32(1)<<(bits.Len(uint(n))-1), maxStride)
}

// now reads the clock.
func now() time.Duration { return mono.Now() }
