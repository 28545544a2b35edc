package adaptive

import (
	"fmt"
	"math"
)

// Gradient2Option configures [Gradient2].
type Gradient2Option func(*gradient2)

// Gradient2Smoothing sets how far each window moves the limit toward the
// one it computes: between 0 (excluded) and 1. The default is 0.2,
// Netflix's.
func Gradient2Smoothing(f float64) Gradient2Option {
	if !(f > 0 && f <= 1) {
		panic(fmt.Sprintf("adaptive.Gradient2Smoothing: f must be above 0 and at most 1, got %v", f))
	}
	return func(g *gradient2) { g.smoothing = f }
}

// Gradient2Tolerance sets how much slower than the baseline a window may
// be before the limit comes down: a window whose mean latency is r times
// the baseline multiplies the limit by tolerance/r, between 0.5 and 1. It
// must be between 1 and 10; the default is 1.5, Netflix's.
func Gradient2Tolerance(tolerance float64) Gradient2Option {
	checkRange("adaptive.Gradient2Tolerance", "tolerance", tolerance, 1, 10)
	return func(g *gradient2) { g.tolerance = tolerance }
}

// Gradient2QueueSize sets the headroom a window with no queueing adds to
// the limit, fixed at n, in place of the default: the square root of the
// limit, and at least 4. It must be between 1 and 1000.
func Gradient2QueueSize(n int) Gradient2Option {
	checkRange("adaptive.Gradient2QueueSize", "n", float64(n), 1, 1000)
	return func(g *gradient2) { g.queue = float64(n) }
}

// Gradient2LongWindow sets the number of windows the baseline latency
// averages over: an exponential average whose weight is 2/(n+1), after a
// plain average of the first 10. It must be between 10 and 100000; the
// default is 600, Netflix's.
func Gradient2LongWindow(n int) Gradient2Option {
	checkRange("adaptive.Gradient2LongWindow", "n", float64(n), 10, 100000)
	return func(g *gradient2) { g.weight = 2 / (float64(n) + 1) }
}

// warmup is the number of windows the baseline is a plain average of.
const warmup = 10

// epsilon absorbs the rounding of the averages: a ratio within it of 1 is
// 1.
const epsilon = 1e-9

type gradient2 struct {
	smoothing, tolerance float64
	queue                float64 // 0: max(4, √limit)
	weight               float64 // of a window in the baseline
	baseline             float64 // long-term mean latency, in ns; 0 before the first window
	n                    int     // windows averaged into the baseline, up to warmup
}

// Gradient2 is the delay-based algorithm of Netflix's Gradient2Limit,
// with two changes that keep it from the traps its users reported.
//
// Each window compares its mean latency (short) with a long-term baseline
// (long), r = short/long. The limit becomes
//
//	limit·(1−smoothing) + (limit·gradient + headroom)·smoothing
//	gradient = clamp(tolerance/r, 0.5, 1)
//
// so it comes down once latency is more than tolerance times the
// baseline. A window with a drop has gradient 0.5 (Netflix's ignores
// drops). A window whose requests in flight never reached half the limit
// leaves it alone: the load, not the service, held it back.
//
// Change 1, against the creep of the limit under moderate overload
// (concurrency-limits PR 134): the headroom (the queue size, max(4, √limit)
// by default, as Envoy's headroom) is added only when r <= 1. Netflix's adds
// it whenever r <= tolerance, so a service queueing a little (r between 1
// and 1.5) sees its limit grow by 0.8 every window while the baseline
// follows the latency up, and the latency with it.
//
// Change 2, against the baseline drifting up during a long incident
// (failsafe-go issue 127): the baseline falls with any faster window, but
// rises only from a window that the limiter's own concurrency cannot have
// slowed: one whose requests in flight stayed at or below half the limit
// is averaged in, and one spent at the limiter's lower bound, where no
// concurrency is lower, re-anchors it. Latency that rises because
// the limit lets too much in never becomes the new normal; latency that
// is the service's own (slower at any concurrency) does.
//
// Defaults: smoothing 0.2, tolerance 1.5, a long window of 600 windows, as
// Netflix's. It returns the function that [New] and [NewLayer] take, which makes
// a fresh one, with these settings and no state, each time it is called.
// It panics if an option is nil.
func Gradient2(opts ...Gradient2Option) func() Algorithm {
	template := newGradient2(opts)
	return func() Algorithm {
		alg := *template
		return &alg
	}
}

// newGradient2 returns the algorithm with opts, for Gradient2.
func newGradient2(opts []Gradient2Option) *gradient2 {
	g := &gradient2{smoothing: 0.2, tolerance: 1.5, weight: 2.0 / 601}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("adaptive.Gradient2: option %d is nil", i))
		}
		o(g)
	}
	return g
}

func (g *gradient2) Update(limit float64, s Sample) float64 {
	if s.Dropped > 0 {
		return limit*(1-g.smoothing) + limit*0.5*g.smoothing
	}
	if s.Timed == 0 {
		return limit
	}
	short := float64(s.MeanLatency)
	g.observe(short, s.AtMin, 2*s.MaxInFlight <= int(limit))
	if 2*float64(s.MaxInFlight) < limit {
		return limit // app-limited: the load never came near the limit
	}
	r := short / g.baseline
	gradient := math.Max(0.5, math.Min(1, g.tolerance/r))
	headroom := 0.0
	if r <= 1+epsilon {
		headroom = g.headroom(limit)
	}
	return limit*(1-g.smoothing) + (limit*gradient+headroom)*g.smoothing
}

// observe folds a window's mean latency into the baseline: always if it is
// faster, and if it is slower only when the limiter's own concurrency
// cannot have slowed it: a window at the least limit re-anchors the
// baseline (no concurrency is lower), and one that stayed at or below half
// the limit is averaged in.
func (g *gradient2) observe(short float64, atMin, unqueued bool) {
	if g.n == 0 || atMin {
		g.baseline, g.n = short, max(g.n, 1)
	} else if short > g.baseline*(1+epsilon) && !unqueued {
		// queueing, perhaps ours: the baseline stays
	} else if g.n < warmup {
		g.baseline += (short - g.baseline) / float64(g.n+1)
		g.n++
	} else {
		g.baseline += (short - g.baseline) * g.weight
	}
	if g.baseline > 2*short {
		g.baseline *= 0.95 // Netflix's: recover faster after an incident
	}
}

func (g *gradient2) headroom(limit float64) float64 {
	if g.queue > 0 {
		return g.queue
	}
	return math.Max(4, math.Sqrt(limit))
}
