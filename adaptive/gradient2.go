package adaptive

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Gradient2Option configures [Gradient2].
type Gradient2Option func(*gradient2)

// Gradient2Smoothing sets how far a window without queueing moves the
// limit up toward the one it computes, the limit plus a headroom: between
// 0 (excluded) and 1. The default is 1, the whole way. A window with
// queueing beyond the tolerance brings the limit down at once.
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
// limit, and at least 1. It must be between 1 and 1000.
func Gradient2QueueSize(n int) Gradient2Option {
	checkRange("adaptive.Gradient2QueueSize", "n", float64(n), 1, 1000)
	return func(g *gradient2) { g.queue = float64(n) }
}

// Gradient2ProbeInterval sets how often, at most, the no-load latency is
// measured afresh in a probe window when nothing else calls for one:
// every d, jittered between 0.75d and 1.25d so that instances do not probe
// together. It must be between a second and a day; the default is a
// minute.
func Gradient2ProbeInterval(d time.Duration) Gradient2Option {
	if d < time.Second || d > 24*time.Hour {
		panic(fmt.Sprintf("adaptive.Gradient2ProbeInterval: d must be between 1s and 24h, got %v", d))
	}
	return func(g *gradient2) { g.every = d }
}

// epsilon absorbs the rounding of the averages: a ratio within it of 1 is
// 1.
const epsilon = 1e-9

type gradient2 struct {
	smoothing, tolerance float64
	queue                float64       // 0: max(4, √limit)
	every                time.Duration // the probes' interval, before jitter
	baseline             float64       // no-load latency of the dependency, in ns; 0 before the first probe
	sinceProbe           time.Duration
	nextProbe            time.Duration // sinceProbe at which the next periodic probe is due
	trigger              trigger
	probe                bool                             // the next window is to be a probe
	fell                 bool                             // the last window brought the limit down
	queued               float64                          // the limit in force when latency was last above the tolerance; 0: not since it grew past it
	prev                 struct{ latency, limit float64 } // the last loaded window's latency and limit in force
	loaded               loadedWindow
	random               func() float64 // the probes' jitter, in [0, 1): rand.Float64 but in tests
}

// Gradient2 is a delay-based algorithm after Netflix's Gradient2Limit:
// each window compares the dependency's latency (its mean, less the
// process's own delay; see [WithOwnDelay]) with its no-load latency, the
// baseline, r = latency/baseline, and moves the limit by the gradient
//
//	limit·tolerance/r
//
// which is Little's law: with limit requests in flight taking r times the
// no-load latency, the dependency serves about limit/r at once, and
// tolerance times that keeps its queue within the tolerance. Above the
// tolerance (r > tolerance) the limit comes down to that at once, by at
// most half unless a probe confirmed it, and the window after holds,
// since it still sees the queue of the limit before; a window with a drop
// takes a tenth away.
// Within it (1 < r <= tolerance) the limit
// holds. Without queueing (r <= 1) it grows by a headroom, the queue size
// (max(1, √limit) by default, as Envoy's), times the smoothing; within
// latency's own noise of that (r <= 1.1), by 1. A window
// whose requests in flight never reached half the limit leaves it alone:
// the load, not the service, held it back.
//
// A window without queueing whose callers were blocked at the limit
// ([Sample].Blocked) doubles it instead, times the smoothing, if that is
// more: a slow start, as TCP's, so that a limit far below the capacity
// (at the start, or when capacity returns) reaches it in a few short
// windows rather than a √limit a window. It doubles from at least the
// limit at which latency last rose above the tolerance, or from any limit
// once latency falls by a quarter at an unchanged limit (the dependency
// has room it did not have); below that it grows by the headroom, so that
// it does not double and fall in turn around a small capacity. When the
// process's own delay is most of the latency, blocked callers make it
// four times as large.
//
// The baseline comes from probes (see [Prober]): a short window at a
// quarter of the limit, at the start, when latency stays above the
// tolerance for 3 windows in a row or jumps past 3 times the baseline (at
// most once in 5 windows), and about once a minute otherwise. A probe's
// latency is the dependency's at low concurrency, so a limiter started
// under overload does not take its queue for the no-load latency, and a
// dependency that became slower for good is measured anew instead of
// having its limit driven to the floor. Between probes, any faster window
// lowers the baseline at once: the no-load latency is at most that. A
// window at the limiter's lower bound re-anchors it, as a probe does, and
// the limit grows from there as after any window without queueing. A probe
// whose latency was mostly the process's own delay keeps the baseline.
// Latencies below a millisecond count as a millisecond (see the package
// doc).
//
// Netflix's Gradient2 differs in four ways that its users reported as
// traps: it takes its baseline from a long average of loaded windows
// (so under overload from the start it never learns the no-load latency),
// it lets the baseline drift up with a long incident, it smooths a fall as
// much as a rise (10% a window: seconds behind a service that slowed), and
// it adds headroom whenever latency is within the tolerance, so the limit
// creeps up under moderate queueing (concurrency-limits PR 134).
//
// Defaults: smoothing 1, tolerance 1.5, a probe about every minute. It
// returns the function that [New] and [NewLayer] take, which makes a fresh
// one, with these settings and no state, each time it is called. It
// panics if an option is nil.
func Gradient2(opts ...Gradient2Option) func() Algorithm {
	template := newGradient2(opts)
	return func() Algorithm {
		alg := *template
		alg.probe = true // the first window
		alg.nextProbe = alg.jittered()
		return &alg
	}
}

// newGradient2 returns the algorithm with opts, for Gradient2.
func newGradient2(opts []Gradient2Option) *gradient2 {
	g := &gradient2{smoothing: 1, tolerance: 1.5, every: time.Minute, random: rand.Float64}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("adaptive.Gradient2: option %d is nil", i))
		}
		o(g)
	}
	return g
}

func (g *gradient2) Update(limit float64, s Sample) float64 {
	g.sinceProbe += s.Elapsed
	if s.Probe {
		g.sinceProbe, g.nextProbe = 0, g.jittered()
		g.trigger.probed()
	}
	g.probe = g.sinceProbe >= g.nextProbe
	if s.Dropped > 0 {
		return limit * dropBackoff
	}
	if s.Timed == 0 {
		g.probe = g.probe || g.baseline == 0
		return limit
	}
	latency := algorithmLatency(s)
	if s.Probe || s.AtMin || g.baseline == 0 {
		// A probe, or the least concurrency the limiter allows, is the
		// no-load latency, unless the process itself held it: then the
		// baseline stays. The loaded window that called for a probe is
		// judged against it now.
		first := g.baseline == 0
		if first || !ownBound(s) {
			g.baseline = max(latency, 1)
		}
		g.prev.limit = 0
		loaded := g.loaded
		g.loaded = loadedWindow{}
		if loaded.limit == 0 {
			if s.AtMin && !s.Probe {
				// At the floor latency is the baseline, no queueing: the
				// limit may grow as from any such window, or it would
				// stay at the floor for good.
				return g.grow(limit, s)
			}
			if first && startsOwnBound(s) {
				return limit + ownBoundGrowth*limit*g.smoothing
			}
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
		// The process's own delay is most of the latency: the process, not
		// the dependency, is the bottleneck, and a lower limit would only
		// shed requests the dependency has room for.
		return g.grow(limit, s)
	}
	if prev := g.prev; prev.limit == math.Floor(limit) && latency <= earlyFall*prev.latency {
		// Latency fell by a quarter at the same limit: the dependency has
		// room it did not have when it last queued.
		g.queued = 0
	}
	g.prev.latency, g.prev.limit = latency, math.Floor(limit)
	r := latency / g.baseline
	if g.trigger.window(r > g.tolerance*(1+epsilon), r > jumpRatio) {
		// Probe before moving: latency that jumps, or stays high while the
		// limit falls, more likely comes from a service that became slower
		// than from more load, which the limit caps. The window is judged
		// once the probe has measured the no-load latency: if it is still
		// above the tolerance, the limit falls then; if not, it stays.
		// After a jump the limit the probe starts from is lowered by the
		// jump, so that the probe's quarter of it stays below a capacity
		// that fell by as much.
		g.probe = true
		g.loaded = loadedWindow{latency, s.MaxInFlight, limit}
		if r > jumpRatio {
			return limit / r
		}
		return limit
	}
	if latency <= fasterRatio*g.baseline {
		g.probe = true // the service became faster: measure it anew
		return limit
	}
	return g.move(limit, latency/g.baseline, s)
}

// loadedWindow is what a window that called for a probe saw, and the
// limit then, to judge it once the probe has measured the no-load
// latency.
type loadedWindow struct {
	latency     float64
	maxInFlight int
	limit       float64
}

// move returns the limit after a window s whose latency was r times the
// baseline.
func (g *gradient2) move(limit, r float64, s Sample) float64 {
	if appLimited(limit, s.MaxInFlight) {
		return limit // app-limited: the load never came near the limit
	}
	if g.fell {
		// The window after a fall still saw the queue of the limit
		// before it: its latency says little of the new one.
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

// grow returns the limit after a window s without queueing: up by the
// headroom times the smoothing, unless the load never came near the
// limit. When callers were blocked at the limit, and the limit is at
// least the one that last queued (or nothing has queued since), it
// doubles if that is more: a slow start, as TCP's. The limit, not the
// dependency, held the load back, the dependency has more room than when
// it last queued, and the next window's latency says where it starts to
// queue now. Below the limit that last queued, it grows by the headroom.
// When the process itself is the bottleneck, blocked callers quadruple
// it: the dependency's latency says nothing of where it queues, and
// every caller shed costs the process as much as one served.
func (g *gradient2) grow(limit float64, s Sample) float64 {
	if appLimited(limit, s.MaxInFlight) {
		return limit
	}
	step := g.headroom(limit)
	switch {
	case s.Blocked > 0 && ownBound(s):
		step = max(step, ownBoundGrowth*limit)
	case s.Blocked > 0 && math.Floor(limit) >= g.queued:
		g.queued = 0
		step = max(step, limit)
	}
	return limit + step*g.smoothing
}

func (g *gradient2) ProbeNext() bool { return g.probe }

func (g *gradient2) headroom(limit float64) float64 {
	if g.queue > 0 {
		return g.queue
	}
	return math.Max(1, math.Sqrt(limit))
}

// jittered returns the probes' interval times a random factor between 0.75
// and 1.25, so that instances started together do not probe together.
func (g *gradient2) jittered() time.Duration {
	return time.Duration(float64(g.every) * (0.75 + g.random()/2))
}
