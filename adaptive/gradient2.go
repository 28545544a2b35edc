package adaptive

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/towergo/tower/internal/option"
)

// Gradient2Option configures [Gradient2].
type Gradient2Option func(*gradient2)

// Gradient2Smoothing sets how far a window without queueing moves the
// limit up toward the limit plus the headroom (default 1, the whole way).
// A fall is never smoothed. It panics unless 0 < f <= 1.
func Gradient2Smoothing(f float64) Gradient2Option {
	option.PanicIf(!(f > 0 && f <= 1), "adaptive.Gradient2Smoothing: f must be above 0 and at most 1, got %v", f)
	return func(g *gradient2) { g.smoothing = f }
}

// Gradient2Tolerance sets how much slower than the baseline a window may
// be before the limit comes down (default 1.5, Netflix's). It panics
// unless 1 <= tolerance <= 10.
func Gradient2Tolerance(tolerance float64) Gradient2Option {
	checkRange("adaptive.Gradient2Tolerance", "tolerance", tolerance, 1, 10)
	return func(g *gradient2) { g.tolerance = tolerance }
}

// Gradient2QueueSize fixes at n the headroom a window with no queueing
// adds to the limit (default max(1, √limit)). It panics unless
// 1 <= n <= 1000.
func Gradient2QueueSize(n int) Gradient2Option {
	checkRange("adaptive.Gradient2QueueSize", "n", float64(n), 1, 1000)
	return func(g *gradient2) { g.queue = float64(n) }
}

// Gradient2ProbeInterval sets how often the no-load latency is measured
// afresh when nothing else calls for a probe: every d (default a minute),
// jittered between 0.75d and 1.25d, at the first window after that whose
// load reached half the limit (below that, the limit holds nothing back
// and a stale baseline costs nothing). It panics unless d is between a
// second and a day.
func Gradient2ProbeInterval(d time.Duration) Gradient2Option {
	option.PanicIf(d < time.Second || d > 24*time.Hour, "adaptive.Gradient2ProbeInterval: d must be between 1s and 24h, got %v", d)
	return func(g *gradient2) { g.every = d }
}

type gradient2 struct {
	noLoad
	smoothing, tolerance float64
	queue                float64       // 0: max(1, √limit)
	every                time.Duration // the probes' interval, before jitter
	sinceProbe           time.Duration
	nextProbe            time.Duration                    // sinceProbe at which the next periodic probe is due
	fell                 bool                             // the last window brought the limit down
	queued               float64                          // the limit in force when latency was last above the tolerance; 0: not since it grew past it
	prev                 struct{ latency, limit float64 } // the last loaded window's latency and limit in force
	random               func() float64                   // the probes' jitter, in [0, 1): rand.Float64 but in tests
}

// Gradient2 is a delay-based algorithm after Netflix's Gradient2Limit. Each
// window compares the dependency's latency (its mean, less the process's
// own delay) with its no-load latency, the baseline, as r =
// latency/baseline. By Little's law the dependency then serves about
// limit/r at once, and limit·tolerance/r keeps its queue within the
// tolerance.
//
//   - r > tolerance: the limit falls to limit·tolerance/r at once, by at
//     most half unless a probe confirmed it; the window after holds, since
//     it still sees the old limit's queue.
//   - 1 < r <= tolerance: the limit holds, or grows by 1 if r <= 1.1.
//   - r <= 1: it grows by the headroom ([Gradient2QueueSize]) times the
//     smoothing. With callers blocked at the limit ([Sample].Blocked), it
//     doubles instead if that is more (a slow start), if it is at least
//     the limit at which latency last rose above the tolerance, or latency
//     has since fallen by a quarter at an unchanged limit; so it does not
//     double and fall in turn around a small capacity.
//
// A window with a drop takes a tenth away. When the process's own delay
// is most of the latency, the limit grows as for r <= 1, fourfold with
// callers blocked.
//
// The baseline comes from probes ([Prober]): first, so that a limiter
// started under overload does not take its queue for it; when latency
// stays above the tolerance for 3 windows or jumps past 3 times the
// baseline (at most once in 5 windows), so that a dependency that became
// slower is measured anew rather than driven to the floor; when a window
// is 20% faster; and periodically ([Gradient2ProbeInterval]). A probe
// whose latency was mostly the process's own delay keeps the baseline; a
// window at the lower bound re-anchors it. A window whose load never came
// to half the limit moves nothing and calls for no probe: the limit held
// nothing back, and a probe would hold back callers it never did.
//
// It returns a constructor of fresh algorithms, and panics if an option is nil.
func Gradient2(opts ...Gradient2Option) func() Algorithm {
	template := newGradient2(opts)
	return func() Algorithm {
		alg := *template
		alg.probe = true // the first window
		alg.nextProbe = alg.jittered()
		return &alg
	}
}

func newGradient2(opts []Gradient2Option) *gradient2 {
	g := &gradient2{smoothing: 1, tolerance: 1.5, every: time.Minute, random: rand.Float64}
	option.Onto("adaptive.Gradient2", g, opts)
	return g
}

func (g *gradient2) Update(limit float64, s Sample) float64 {
	g.sinceProbe += s.Elapsed
	if s.Probe {
		g.sinceProbe, g.nextProbe = 0, g.jittered()
		g.probed()
	}
	g.probe = g.sinceProbe >= g.nextProbe && !appLimited(limit, s.MaxInFlight)
	if s.Dropped > 0 {
		return limit * dropBackoff
	}
	if s.Timed == 0 {
		g.probe = g.probe || g.baseline == 0
		return limit
	}
	latency := algorithmLatency(s)
	if s.Probe || s.AtMin || g.baseline == 0 {
		g.prev.limit = 0
		loaded, first := g.measure(latency, s)
		switch {
		case loaded.limit == 0 && s.AtMin && !s.Probe:
			return g.grow(limit, s) // no queueing at the floor: grow, or stay there for good
		case loaded.limit == 0 && first && startsOwnBound(s):
			return limit + ownBoundGrowth*limit*g.smoothing
		case loaded.limit == 0:
			return limit
		}
		if r := loaded.latency / g.baseline; r > g.tolerance*(1+epsilon) {
			// Confirmed by the probe: all the way down at once.
			g.fell, g.queued = true, math.Floor(loaded.limit)
			return loaded.limit * g.tolerance / r
		}
		return loaded.limit
	}
	if ownBound(s) {
		// The process is the bottleneck: a lower limit would only shed
		// requests the dependency has room for.
		return g.grow(limit, s)
	}
	if prev := g.prev; prev.limit == math.Floor(limit) && latency <= earlyFall*prev.latency {
		g.queued = 0 // the dependency has room it did not have when it last queued
	}
	g.prev.latency, g.prev.limit = latency, math.Floor(limit)
	r := latency / g.baseline
	if next, ok := g.probeDue(limit, latency, r > g.tolerance*(1+epsilon), s); ok {
		return next
	}
	return g.move(limit, r, s)
}

// move returns the limit after a window s of latency r times the baseline.
func (g *gradient2) move(limit, r float64, s Sample) float64 {
	if appLimited(limit, s.MaxInFlight) {
		return limit
	}
	if g.fell { // the window after a fall still saw the old limit's queue
		g.fell = false
		return limit
	}
	if r > g.tolerance*(1+epsilon) {
		g.fell, g.queued = true, math.Floor(limit)
		return math.Max(limit*g.tolerance/r, limit/2)
	}
	if r <= 1+epsilon {
		return g.grow(limit, s)
	}
	if r <= unqueued {
		return limit + 1 // within the noise of no queueing: a step
	}
	return limit
}

// grow returns the limit after a window s without queueing (see
// Gradient2). Doubling shows in the next window where the dependency
// queues now; with the process the bottleneck, every caller shed costs it
// as much as one served.
func (g *gradient2) grow(limit float64, s Sample) float64 {
	if appLimited(limit, s.MaxInFlight) {
		return limit
	}
	step := g.queue // the headroom
	if step == 0 {
		step = math.Max(1, math.Sqrt(limit))
	}
	switch {
	case s.Blocked > 0 && ownBound(s):
		step = max(step, ownBoundGrowth*limit)
	case s.Blocked > 0 && math.Floor(limit) >= g.queued:
		g.queued = 0
		step = max(step, limit)
	}
	return limit + step*g.smoothing
}

// jittered returns the probes' interval, jittered so that instances
// started together do not probe together.
func (g *gradient2) jittered() time.Duration {
	return time.Duration(float64(g.every) * (0.75 + g.random()/2))
}
