package adaptive

import (
	"math"
	"time"

	"github.com/towergo/tower/internal/option"
)

// An Algorithm moves a [Limiter]'s concurrency limit: at the end of each
// window Update gets the limit, within the bounds, and what the window saw
// (see the package doc). Update is called under the limiter's lock. An
// Algorithm holds one limiter's state: give each limiter its own
// ([NewLayer] makes one per service).
type Algorithm interface {
	// Update returns the new limit; a NaN or infinite one is ignored.
	Update(limit float64, s Sample) float64
}

// A Sample is what a window of the limiter saw of the calls that ended in
// it, of which not all are timed (see the package doc).
type Sample struct {
	// Dropped is the number of calls dropped ([WithDropped]), untimed.
	Dropped int
	// Timed is the number of answered calls that were timed.
	Timed int
	// MeanLatency and MinLatency are the mean and least latency of the
	// timed calls (of the run that ended the window early, if one did),
	// zero if none. The mean counts each call at most twice the last
	// window's mean (in a run, twice the run's median), so that a rare
	// slow call is not taken for queueing.
	MeanLatency, MinLatency time.Duration
	// MaxInFlight is the most requests in flight, the call among them,
	// when a timed call started or a dropped call ended.
	MaxInFlight int
	// Blocked is the number of callers that found no permit free: that
	// waited, or were turned away by a LoadShed above or [WithMaxWaiting].
	Blocked int
	// AtMin reports that the limit was at its lower bound for the whole
	// window, so its latency is not the limiter's own queueing.
	AtMin bool
	// Probe reports that the window was a probe (see [Prober]).
	Probe bool
	// OwnDelay is the part of MeanLatency that the process itself added
	// ([WithOwnDelay]), or zero.
	OwnDelay time.Duration
	// Elapsed is how long the window lasted.
	Elapsed time.Duration
}

// A Prober is an [Algorithm] that measures the service's no-load latency
// in probe windows. Its limiter's first window is a probe, and after each
// window ProbeNext says whether the next one is. During a probe the limit
// in force is a quarter of the algorithm's, at least 3 and within the
// bounds, so that the service's queue drains. Every call is timed, but
// only those that started in it with at most its limit in flight count.
// The probe ends once it has timed as many as normal priority may have in
// flight in it, at most half the window's minimum, or once it has lasted a
// window and timed one or seen a drop.
type Prober interface {
	Algorithm
	// ProbeNext reports whether the window after the one Update was just
	// called for is to be a probe.
	ProbeNext() bool
}

// checkRange panics unless lo <= v <= hi (NaN fails), naming fn and name.
func checkRange(fn, name string, v, lo, hi float64) {
	option.PanicIf(!(v >= lo && v <= hi), "%s: %s must be between %v and %v, got %v", fn, name, lo, hi, v)
}

// log10Floor is Netflix's Log10RootFunction: ⌊log10(limit)⌋, at least 1.
func log10Floor(limit float64) float64 {
	return math.Max(1, math.Floor(math.Log10(math.Max(1, limit))))
}

// What moves Gradient2 and Vegas besides their own law. Latency above the
// tolerance for highWindows windows, or above jumpRatio times the no-load
// latency, calls for a probe, at most once in cooldownWindows: it more
// likely means a slower service than more load, which the limit caps.
const (
	highWindows     = 3
	jumpRatio       = 3.0
	cooldownWindows = 5
	fasterRatio     = 0.8 // a window this much faster calls for a probe at once
	unqueued        = 1.1 // within this of the no-load latency is noise, not queueing
	dropBackoff     = 0.9 // Gradient2's factor after a window with a drop
	ownBoundGrowth  = 3   // fourfold: see Gradient2 and Vegas
	epsilon         = 1e-9
	// latencyFloor: below it latency is mostly the caller's own path, which
	// the own-delay estimate sees little of, and queueing is no harm worth
	// a shed request.
	latencyFloor = float64(time.Millisecond)
)

// ownBound reports whether the process's own delay, not the dependency, is
// most of a window's latency.
func ownBound(s Sample) bool { return 2*s.OwnDelay > s.MeanLatency }

// startsOwnBound reports whether s, a limiter's first probe, found the
// process the bottleneck with callers held back: the limit grows at once.
func startsOwnBound(s Sample) bool { return s.Probe && s.Blocked > 0 && ownBound(s) }

// appLimited reports whether the load, not the limit, held a window back,
// which leaves the limit alone and calls for no probe: its requests in
// flight never came to half the limit in force (rounded down, so that at
// 2.4 normal priority's 1 in flight may still move it). Its latency is not
// the limit's doing, and a probe at a quarter of a limit the load does not
// reach may hold back callers the limit never did: with a patience, shed
// them, for no queue of the dependency's.
func appLimited(limit float64, maxInFlight int) bool {
	return 2*maxInFlight < int(limit)
}

// dependencyLatency is the mean less the process's own delay, but at least
// half the mean, since the own delay is an estimate.
func dependencyLatency(s Sample) time.Duration {
	return max(s.MeanLatency-s.OwnDelay, s.MeanLatency/2)
}

// algorithmLatency is what Gradient2 and Vegas judge a window by.
func algorithmLatency(s Sample) float64 {
	return max(float64(dependencyLatency(s)), latencyFloor)
}

// noLoad is what Gradient2 and Vegas share: the dependency's no-load
// latency and the probes that measure it.
type noLoad struct {
	baseline float64      // the no-load latency, in ns; 0 before the first probe
	probe    bool         // the next window is to be a probe
	loaded   loadedWindow // the window that called for the probe
	high     int          // windows in a row with latency above the tolerance
	cooldown int          // windows until a triggered probe may come again
}

// loadedWindow is what a window that called for a probe saw.
type loadedWindow struct {
	latency     float64
	maxInFlight int
	limit       float64
}

func (n *noLoad) ProbeNext() bool { return n.probe }

// probed records that a probe ran.
func (n *noLoad) probed() { n.high, n.cooldown = 0, cooldownWindows }

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
// quarter stays below a capacity that fell by as much, held otherwise. A
// window the load held back (appLimited) calls for none, and counts
// toward neither the trigger nor its cooldown.
func (n *noLoad) probeDue(limit, latency float64, high bool, s Sample) (float64, bool) {
	if appLimited(limit, s.MaxInFlight) {
		return 0, false
	}
	jumped := latency > jumpRatio*n.baseline
	if n.cooldown > 0 {
		n.cooldown--
	}
	if high {
		n.high++
	} else {
		n.high = 0
	}
	if n.cooldown == 0 && (jumped || n.high >= highWindows) {
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
