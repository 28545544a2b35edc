package adaptive

import (
	"fmt"
	"math"
	"time"
)

// An Algorithm moves a [Limiter]'s concurrency limit. At the end of each
// window the limiter calls Update with the limit it holds and what the
// window saw, and takes the value returned as the new limit, clamped to
// its bounds (see [WithBounds]); the limit in force is that value rounded
// down. The limit handed to Update is always within the bounds, so an
// algorithm's state never winds up beyond them.
//
// The limiter calls Update from one goroutine at a time, under its lock,
// so an Algorithm needs no lock of its own. An Algorithm holds the state of
// one limiter: give each limiter its own (a [NewLayer] builds one per
// service it wraps).
type Algorithm interface {
	// Update returns the limit after a window that saw s, when the limit
	// was limit. A NaN or infinite result leaves the limit where it was.
	Update(limit float64, s Sample) float64
}

// A Sample is what a window of the limiter saw: the calls that ended in it.
// Every dropped call is counted; of the others, the latency of one in a
// stride is measured, and of all of them when calls are few (see the
// package doc).
type Sample struct {
	// Dropped is the number of calls that were dropped: timed out, shed
	// or throttled downstream, or whatever the [WithDropped] classifier
	// says. Their latency is not measured: a timeout's would say only how
	// long the timeout was.
	Dropped int
	// Timed is the number of calls whose latency was measured: calls
	// that answered, with a response or an error that is not a drop, and
	// were picked for timing. A call its caller cancelled is not timed.
	Timed int
	// MeanLatency and MinLatency are the mean and the least latency of
	// the timed calls, zero if none was timed; of the run of calls that
	// ended the window early, if one did (see the package doc). The mean
	// counts each call at most twice the last window's mean (a run's,
	// twice the run's median), so that a rare slow call is not taken for
	// queueing.
	MeanLatency, MinLatency time.Duration
	// MaxInFlight is the most requests that were in flight, the call
	// itself among them, when a timed call started or a dropped call
	// ended: how close the window came to the limit. Algorithms do not
	// raise a limit that the load never approached.
	MaxInFlight int
	// Blocked is the number of callers that found no permit free under the
	// limit: that waited for one, or were turned away (by a LoadShed
	// above, or [WithMaxWaiting]). Callers blocked while the latency
	// shows no queueing say the limit, not the dependency, held the load
	// back.
	Blocked int
	// AtMin reports that the limit was at its lower bound for the whole
	// window: the least concurrency the limiter allows, so that latency
	// seen then cannot be blamed on the limiter's own queueing.
	AtMin bool
	// Probe reports that the window was a probe (see [Prober]): its timed
	// calls all started with at most the probe's limit in flight, so their
	// latency is the service's at low concurrency, its no-load latency.
	// A probe's Dropped counts the drops that ended during it.
	Probe bool
	// OwnDelay is the part of MeanLatency that the process itself added,
	// waiting to run or for a worker of its own, as [WithOwnDelay]'s
	// function reported it at the window's end; zero without it. The
	// dependency's own time is MeanLatency less OwnDelay: a rise of
	// OwnDelay alone is not the dependency's overload.
	OwnDelay time.Duration
	// Elapsed is how long the window lasted.
	Elapsed time.Duration
}

// A Prober is an [Algorithm] that measures the service's no-load latency
// in probe windows. A limiter whose algorithm is a Prober makes its first
// window a probe, and after each window asks ProbeNext whether the next
// one is. During a probe the limit in force is the probe's, a quarter of
// the algorithm's limit, at least 3 (Envoy's min_concurrency) and within
// the bounds, so that the service's own queue drains; the probe ends once
// it has timed, of the calls that started with no more than the probe's
// limit in flight, as many as normal priority may have in flight in it (a
// round trip at its limit), at most half the window's minimum, or once it
// has lasted a window and timed one (or seen a drop). Update then gets a
// Sample with Probe set, and the limit in force goes back to the one
// Update returns. While a probe lasts, callers beyond its limit wait, or,
// under a LoadShed, are shed.
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

// Probe triggers, for the algorithms that probe: latency above the
// tolerance for highWindows windows in a row, or a jump to more than
// jumpRatio times the no-load latency, calls for a probe, at most once in
// cooldownWindows windows. A limit that falls and still sees latency
// high, or a latency that jumps, more likely comes from a service that
// became slower than from more load: the limit caps the load.
const (
	highWindows     = 3
	jumpRatio       = 3.0
	cooldownWindows = 5
	// fasterRatio: a window this much faster than the no-load latency
	// calls for a probe at once (not subject to the cooldown): a service
	// that became faster for good is measured anew at low concurrency,
	// not only at the concurrency it has now.
	fasterRatio = 0.8
	// unqueued: a window within this of the no-load latency is not
	// queueing, latency's own noise aside, and the limit may grow.
	unqueued = 1.1
	// dropBackoff multiplies Gradient2's limit after a window with a drop:
	// AIMD's default backoff.
	dropBackoff = 0.9
)

// ownBoundGrowth is how many times the limit it adds to itself after a
// window in which the process's own delay was most of the latency and
// callers were blocked at the limit (see [WithOwnDelay]).
const ownBoundGrowth = 3

// ownBound reports whether the process's own delay is most of a window's
// latency: then the process, not the dependency, is the bottleneck.
func ownBound(s Sample) bool { return 2*s.OwnDelay > s.MeanLatency }

// startsOwnBound reports whether s, the first probe of a limiter, found
// the process itself the bottleneck with callers held back: the initial
// limit is a guess, and the probe says that the process, not the
// dependency, held even a quarter of it back, so the limit grows at once
// as after any such window, not a window later.
func startsOwnBound(s Sample) bool { return s.Probe && s.Blocked > 0 && ownBound(s) }

// appLimited reports whether the load, not the limit, held a window back:
// its requests in flight never came to half the limit in force (the limit
// rounded down). Algorithms neither raise nor lower such a limit. The
// limit in force, not the algorithm's fraction: at a limit of 2.4, normal
// priority may have 1 in flight (see [WithReserve]), which is half of 2,
// and the limit must still be free to move.
func appLimited(limit float64, maxInFlight int) bool {
	return 2*maxInFlight < int(limit)
}

// dependencyLatency is the dependency's part of a window's mean latency:
// the mean less the process's own delay, but at least half the mean. An
// own delay beyond half says the process is the bottleneck (ownBound),
// not how little the dependency took: the own delay is an estimate, and a
// baseline taken from what is left of it could be a nanosecond, next to
// which every later window would look queued.
func dependencyLatency(s Sample) time.Duration {
	return max(s.MeanLatency-s.OwnDelay, s.MeanLatency/2)
}

// latencyFloor is the least latency Gradient2 and Vegas tell apart: a
// dependency that answers faster is taken to answer in it, and so is
// each window. Below a millisecond a call's latency is mostly the
// caller's own path (system calls, wake-ups, the kernel's and the
// runtime's batching, which more calls in flight make cheaper per call),
// not the dependency's queue, and the own-delay estimate sees little of
// it. Judged by its own no-load latency, a 100µs dependency would be held
// to a concurrency of 2 or 3 while it had room for many more: a reverse
// proxy in front of fast backends on loopback served half of what it
// could. Above the floor, a millisecond of queueing is no harm worth a
// shed request.
const latencyFloor = float64(time.Millisecond)

// algorithmLatency is the latency Gradient2 and Vegas judge a window by:
// the dependency's part, at least latencyFloor.
func algorithmLatency(s Sample) float64 {
	return max(float64(dependencyLatency(s)), latencyFloor)
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
