package adaptive

import (
	"context"
	"errors"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/mono"
)

// window is what the current window has seen so far, and the algorithm
// that moves the limit when it ends. The gate's lock guards it.
type window struct {
	alg        Algorithm
	prober     Prober // alg, if it probes; nil otherwise
	own        func() time.Duration
	limit      float64 // the algorithm's, within the bounds; the limit in force is its floor, or the probe's
	min, max   int
	length     time.Duration
	minSamples int

	start       time.Duration // mono reading
	timed       int
	dropped     int
	sum, least  time.Duration
	maxInFlight int
	blocked     int           // callers that found no permit free
	short       bool          // the limit is settling: see WithWindow
	lastMean    time.Duration // the mean latency of the last window that timed a call

	run         []time.Duration // the latest timed calls' latencies, few() at most, to end the window early
	sinceStride int             // calls observed since the stride last changed

	probing      bool
	probeLimit   int
	probeSamples int // the timed calls that end it: as many as normal priority may have in flight in it, at most few()
}

// The rules of WithWindow and of Sample.MeanLatency. A faster run ends a
// window only with callers blocked: unblocked, it may be noise.
const (
	shortDivisor = 10
	earlyRatio   = 2
	earlyFall    = 0.75
	clipRatio    = 2
	probeFloor   = 3  // the least limit of a probe, bounds allowing: with fewer, a probe of a slow service takes long
	maxStride    = 64 // the most calls per timed call
)

func (w *window) inForce() int {
	if w.probing {
		return w.probeLimit
	}
	return int(w.limit)
}

type outcome uint8

const (
	answered outcome = iota // a response, or an error that is not a drop
	drop
	ignored // cancelled by its caller, or panicked: says nothing of the service
)

// classify returns the outcome of a call with ctx that returned err, not
// nil, after elapsed, if it was timed. A drop with ctx itself ended is the
// caller's deadline, perhaps spent in a queue in front of the service.
func (g *gate) classify(ctx context.Context, err error, timed bool, elapsed time.Duration) outcome {
	if g.dropped(err) {
		if ctx.Err() != nil && (!timed || elapsed < 2*time.Duration(g.typical.Load())) {
			return ignored
		}
		return drop
	}
	if errors.Is(err, context.Canceled) {
		return ignored
	}
	return answered
}

// observe records a timed or dropped call that ended at end after latency,
// with inflight in flight when it started (timed) or ended (dropped). It
// returns the change of the limit in force, for the sink.
func (g *gate) observe(end, latency time.Duration, o outcome, inflight int) (delta int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	w := &g.w
	switch {
	case o == drop:
		w.dropped++
	case o == answered && (!w.probing || (end-latency >= w.start && inflight <= w.probeLimit)):
		if w.timed == 0 || latency < w.least {
			w.least = latency
		}
		w.timed++
		if w.lastMean > 0 {
			w.sum += min(latency, clipRatio*w.lastMean)
		} else {
			w.sum += latency
		}
		if len(w.run) < cap(w.run) {
			w.run = append(w.run, latency)
		}
	}
	w.maxInFlight = max(w.maxInFlight, inflight)
	if w.probing {
		// Drops end a probe only once it has lasted a window: calls from
		// before it may drop while the service's queue drains.
		if w.timed < w.probeSamples && (end-w.start < w.length || w.timed+w.dropped == 0) {
			return 0
		}
		return g.closeLocked(end)
	}
	few := w.few()
	if w.sinceStride++; w.sinceStride >= 8*few*shortDivisor {
		// Far more timed calls than the window needs: time fewer.
		w.sinceStride = 0
		g.stride.Store(min(2*g.stride.Load(), maxStride))
	}
	length, minSamples := w.length, w.minSamples
	if w.short {
		length, minSamples = length/shortDivisor, few
	}
	if len(w.run) >= few {
		slices.Sort(w.run)
		median := w.run[len(w.run)/2] // not the mean: one rare slow call is not a slower dependency
		if w.lastMean > 0 && (median > earlyRatio*w.lastMean ||
			w.blocked > 0 && float64(w.run[len(w.run)-1]) < earlyFall*float64(w.lastMean)) {
			w.timed, w.sum, w.least = len(w.run), 0, w.run[0]
			for _, l := range w.run {
				w.sum += min(l, clipRatio*median)
			}
			return g.closeLocked(end)
		}
		w.run = w.run[:0]
	}
	if end-w.start < length || (w.timed < minSamples && w.dropped == 0) {
		return 0
	}
	return g.closeLocked(end)
}

// few is the least number of timed calls of a short window, and of a run.
func (w *window) few() int { return max(1, w.minSamples/2) }

// closeLocked ends the window at end and returns how far the limit moved.
func (g *gate) closeLocked(end time.Duration) int {
	w := &g.w
	s := Sample{
		Dropped:     w.dropped,
		Timed:       w.timed,
		MinLatency:  w.least,
		MaxInFlight: w.maxInFlight,
		Blocked:     w.blocked,
		AtMin:       !w.probing && int(w.limit) <= w.min, // the limit moves only when a window ends
		Probe:       w.probing,
		Elapsed:     end - w.start,
	}
	last := w.lastMean
	if w.timed > 0 {
		s.MeanLatency = w.sum / time.Duration(w.timed)
		if w.own != nil {
			s.OwnDelay = min(max(w.own(), 0), s.MeanLatency)
		}
		g.typical.Store(int64(dependencyLatency(s)))
		w.lastMean = s.MeanLatency
	}
	w.start = end
	w.timed, w.dropped, w.sum, w.least, w.maxInFlight, w.blocked = 0, 0, 0, 0, 0, 0
	w.run = w.run[:0]
	if !w.probing && s.Elapsed > 0 {
		// A short window's calls at this one's rate.
		calls := float64(s.Timed*int(g.stride.Load())+s.Dropped) * float64(w.length/shortDivisor) / float64(s.Elapsed)
		g.stride.Store(strideFor(int(min(calls, math.MaxInt32)), w.few()))
	}
	w.sinceStride = 0

	next := w.alg.Update(w.limit, s)
	if math.IsNaN(next) || math.IsInf(next, 0) {
		next = w.limit
	}
	was := int(w.limit)
	w.limit = min(max(next, float64(w.min)), float64(w.max))
	moved := int(w.limit) - was
	w.short = s.Probe || 4*max(moved, -moved) >= was || s.Timed > 0 && last > 0 && 4*max(s.MeanLatency-last, last-s.MeanLatency) >= last
	w.probing = false
	if w.prober != nil && w.prober.ProbeNext() {
		g.startProbeLocked()
	}
	return g.setLimitLocked(w.inForce())
}

// startProbeLocked makes the window that starts now a probe.
func (g *gate) startProbeLocked() {
	w := &g.w
	w.probing = true
	w.probeLimit = min(max(w.min, probeFloor, int(math.Ceil(w.limit/4))), w.max)
	w.probeSamples = min(w.few(), int(g.room(class(tower.PriorityNormal), uint64(w.probeLimit))))
	g.stride.Store(1)
}

// strideFor returns the stride for a short window of about calls calls:
// a power of two, 1 to maxStride, that leaves about 4·minSamples timed.
func strideFor(calls, minSamples int) uint32 {
	n := calls / (4 * minSamples)
	if n <= 1 {
		return 1
	}
	return min(uint32(1)<<(bits.Len(uint(n))-1), maxStride)
}

func now() time.Duration { return mono.Now() }
