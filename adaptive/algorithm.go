package adaptive

import (
	"fmt"
	"math"
	"time"
)

// An Algorithm moves a [Limiter]'s concurrency limit. At the end of each
// window the limiter calls Update with its limit, always within the
// bounds, and what the window saw; the value returned, clamped to
// [WithBounds], is the new limit, and the limit in force is that rounded
// down. Update is called under the limiter's lock, so an Algorithm needs
// no lock of its own. An Algorithm holds one limiter's state: give each
// limiter its own ([NewLayer] makes one per service).
type Algorithm interface {
	// Update returns the limit after a window that saw s, when the limit
	// was limit. A NaN or infinite result leaves the limit where it was.
	Update(limit float64, s Sample) float64
}

// A Sample is what a window of the limiter saw of the calls that ended in
// it. Every drop is counted; of the others, one in a stride is timed (see
// the package doc).
type Sample struct {
	// Dropped is the number of calls dropped, as [WithDropped] says,
	// whose latency is not measured.
	Dropped int
	// Timed is the number of answered calls (a response, or an error
	// that is not a drop) whose latency was measured.
	Timed int
	// MeanLatency and MinLatency are the mean and least latency of the
	// timed calls (of the run that ended the window early, if one did),
	// zero if none. The mean counts each call at most twice the last
	// window's mean (in a run, twice the run's median).
	MeanLatency, MinLatency time.Duration
	// MaxInFlight is the most requests in flight, the call among them,
	// when a timed call started or a dropped call ended.
	MaxInFlight int
	// Blocked is the number of callers that found no permit free: that
	// waited, or were turned away by a LoadShed above or
	// [WithMaxWaiting].
	Blocked int
	// AtMin reports that the limit was at its lower bound for the whole
	// window, so its latency is not the limiter's own queueing.
	AtMin bool
	// Probe reports that the window was a probe (see [Prober]), whose
	// latency is the no-load latency.
	Probe bool
	// OwnDelay is the part of MeanLatency that the process itself added,
	// as [WithOwnDelay]'s function reported it; zero without it.
	OwnDelay time.Duration
	// Elapsed is how long the window lasted.
	Elapsed time.Duration
}

// A Prober is an [Algorithm] that measures the service's no-load latency
// in probe windows. Its limiter's first window is a probe, and after each
// window ProbeNext says whether the next one is. During a probe the limit
// in force is a quarter of the algorithm's, at least 3 and within the
// bounds, so that the service's queue drains; callers beyond it wait, or
// under a LoadShed are shed, which is what a probe costs. Every call is
// timed, but only those that started in it with at most its limit in
// flight count. The probe ends once it has timed as many as normal
// priority may have in flight in it, at most half the window's minimum,
// or once it has lasted a window and timed one or seen a drop.
type Prober interface {
	Algorithm
	// ProbeNext reports whether the window after the one Update was just
	// called for is to be a probe.
	ProbeNext() bool
}

// checkRange panics unless lo <= v <= hi, naming fn and the parameter.
func checkRange(fn, name string, v, lo, hi float64) {
	if !(v >= lo && v <= hi) { // NaN fails too
		panic(fmt.Sprintf("%s: %s must be between %v and %v, got %v", fn, name, lo, hi, v))
	}
}

// log10Floor is Netflix's Log10RootFunction: the integer part of log10 of
// limit, at least 1.
func log10Floor(limit float64) float64 {
	return math.Max(1, math.Floor(math.Log10(math.Max(1, limit))))
}

// What moves Gradient2 and Vegas besides their own law. A window above the
// tolerance for highWindows windows in a row, or above jumpRatio times
// the no-load latency, calls for a probe, at most once in cooldownWindows
// windows: latency that jumps, or stays high while the limit falls, more
// likely means a slower service than more load, which the limit caps.
const (
	highWindows     = 3
	jumpRatio       = 3.0
	cooldownWindows = 5
	// fasterRatio: a window this much faster than the no-load latency
	// calls for a probe at once, without cooldown.
	fasterRatio = 0.8
	// unqueued: a window within this of the no-load latency is not
	// queueing, latency's own noise aside, and the limit may grow.
	unqueued = 1.1
	// dropBackoff multiplies Gradient2's limit after a window with a drop.
	dropBackoff = 0.9
	// ownBoundGrowth is how many times itself the limit grows by after an
	// ownBound window with callers blocked (see [WithOwnDelay]).
	ownBoundGrowth = 3
	// epsilon absorbs the rounding of the averages: a ratio within it of
	// 1 is 1.
	epsilon = 1e-9
	// latencyFloor is the least latency Gradient2 and Vegas tell apart.
	// Below it latency is mostly the caller's own path, which the
	// own-delay estimate sees little of, and a millisecond of queueing is
	// no harm worth a shed request.
	latencyFloor = float64(time.Millisecond)
)

// ownBound reports whether the process's own delay is most of a window's
// latency: then the process, not the dependency, is the bottleneck.
func ownBound(s Sample) bool { return 2*s.OwnDelay > s.MeanLatency }

// startsOwnBound reports whether s, a limiter's first probe, found the
// process the bottleneck with callers held back: the limit then grows at
// once, not a window later.
func startsOwnBound(s Sample) bool { return s.Probe && s.Blocked > 0 && ownBound(s) }

// appLimited reports whether the load, not the limit, held a window back:
// its requests in flight never came to half the limit in force (rounded
// down, so that at 2.4, with normal priority's 1 in flight, the limit may
// still move). Algorithms leave such a limit alone.
func appLimited(limit float64, maxInFlight int) bool {
	return 2*maxInFlight < int(limit)
}

// dependencyLatency is the dependency's part of a window's mean latency:
// the mean less the process's own delay, but at least half the mean, since
// the own delay is an estimate.
func dependencyLatency(s Sample) time.Duration {
	return max(s.MeanLatency-s.OwnDelay, s.MeanLatency/2)
}

// algorithmLatency is the latency Gradient2 and Vegas judge a window by:
// the dependency's part, at least latencyFloor.
func algorithmLatency(s Sample) float64 {
	return max(float64(dependencyLatency(s)), latencyFloor)
}

// noLoad is what Gradient2 and Vegas share: the dependency's no-load
// latency and the probes that measure it.
type noLoad struct {
	baseline float64 // the no-load latency, in ns; 0 before the first probe
	trigger  trigger
	probe    bool         // the next window is to be a probe
	loaded   loadedWindow // the window that called for the probe
}

// loadedWindow is what a window that called for a probe saw, to judge it
// once the probe has measured the no-load latency.
type loadedWindow struct {
	latency     float64
	maxInFlight int
	limit       float64
}

func (n *noLoad) ProbeNext() bool { return n.probe }

// measure takes latency, of a probe or a window at the floor, as the
// no-load latency, unless the process itself held it after the first. It
// returns the loaded window that called for the probe, zero if none.
func (n *noLoad) measure(latency float64, s Sample) (loaded loadedWindow, first bool) {
	first = n.baseline == 0
	if first || !ownBound(s) {
		n.baseline = max(latency, 1)
	}
	loaded, n.loaded = n.loaded, loadedWindow{}
	return loaded, first
}

// probeDue reports whether a loaded window of latency, high if above the
// algorithm's tolerance, calls for a probe, and if so returns the limit
// until the probe judges it: lowered by a jump, so that the probe's
// quarter stays below a capacity that fell by as much, held otherwise.
func (n *noLoad) probeDue(limit, latency float64, high bool, s Sample) (float64, bool) {
	jumped := latency > jumpRatio*n.baseline
	if n.trigger.window(high, jumped) {
		n.probe = true
		n.loaded = loadedWindow{latency, s.MaxInFlight, limit}
		if jumped {
			return limit * n.baseline / latency, true
		}
		return limit, true
	}
	if latency <= fasterRatio*n.baseline {
		n.probe = true // the service became faster: measure it anew
		return limit, true
	}
	return 0, false
}

// trigger is the part of the probe schedule that reacts to latency.
type trigger struct {
	high     int // windows in a row with latency above the tolerance
	cooldown int // windows until a triggered probe may come again
}

// window records a window with latency high (above the tolerance) or
// jumped, and reports whether a probe is due.
func (t *trigger) window(high, jumped bool) bool {
	if t.cooldown > 0 {
		t.cooldown--
	}
	if high {
		t.high++
	} else {
		t.high = 0
	}
	return t.cooldown == 0 && (jumped || t.high >= highWindows)
}

// probed records that a probe ran.
func (t *trigger) probed() { t.high, t.cooldown = 0, cooldownWindows }
