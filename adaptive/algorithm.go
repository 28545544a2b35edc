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
	// the timed calls, zero if none was timed.
	MeanLatency, MinLatency time.Duration
	// MaxInFlight is the most requests that were in flight, the call
	// itself among them, when a timed call started or a dropped call
	// ended: how close the window came to the limit. Algorithms do not
	// raise a limit that the load never approached.
	MaxInFlight int
	// AtMin reports that the limit was at its lower bound for the whole
	// window: the least concurrency the limiter allows, so that latency
	// seen then cannot be blamed on the limiter's own queueing.
	AtMin bool
	// Elapsed is how long the window lasted.
	Elapsed time.Duration
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
