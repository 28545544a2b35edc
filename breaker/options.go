package breaker

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/retry"
)

// The defaults, and where they come from: see the package doc.
const (
	// DefaultConsecutiveFailures is the trip condition of a breaker given
	// neither [WithConsecutiveFailures] nor [WithFailureRatio]: Envoy's
	// consecutive_5xx and Finagle's consecutiveFailures.
	DefaultConsecutiveFailures = 5
	// DefaultOpenDelay is the open delay after a first trip: Polly's
	// BreakDuration, and the start of Finagle's dead time.
	DefaultOpenDelay = 5 * time.Second
	// DefaultMaxOpenDelay caps the open delay as trips follow one another:
	// the end of Finagle's dead time, and Envoy's max_ejection_time.
	DefaultMaxOpenDelay = 300 * time.Second
	// DefaultJitter is the share of the open delay drawn at random:
	// Finagle's equal jitter, half fixed and half random, and Linkerd's
	// jitter of 0.5.
	DefaultJitter = 0.5
)

// An Option configures a [Breaker].
type Option func(*options)

type options struct {
	consecutive int     // failures in a row that trip; 0: not that way
	ratio       float64 // failure ratio that trips, if window.set()
	minCalls    int
	window      Window
	base, max   time.Duration
	jitter      float64
	random      func() float64
	probes      int
	successes   int
	budget      retry.Budget
	sink        metrics.Sink
	onChange    func(from, to State)
}

// newOptions applies opts for the function named fn, over the defaults.
func newOptions(fn string, opts []Option) options {
	o := options{
		base:      DefaultOpenDelay,
		max:       DefaultMaxOpenDelay,
		jitter:    DefaultJitter,
		random:    rand.Float64,
		probes:    1,
		successes: 1,
	}
	option.Onto(fn, &o, opts)
	if o.consecutive == 0 && !o.window.set() {
		o.consecutive = DefaultConsecutiveFailures
	}
	return o
}

// WithConsecutiveFailures makes the breaker trip, from closed to open, at
// the nth failure in a row: a success in between starts the count again.
// Given alone it is the only trip condition; given with
// [WithFailureRatio], the breaker trips on whichever comes first. A
// breaker given neither trips at DefaultConsecutiveFailures (5) in a row.
// It panics if n is less than 1.
func WithConsecutiveFailures(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("breaker.WithConsecutiveFailures: n must be at least 1, got %d", n))
	}
	return func(o *options) { o.consecutive = n }
}

// A Window is where [WithFailureRatio] measures the failure ratio: the
// last calls, by number ([LastCalls]) or by time ([LastDuration]). The
// zero Window is no window, and WithFailureRatio refuses it.
type Window struct {
	calls int           // the last calls calls, if > 0
	d     time.Duration // the last d, if > 0
}

func (w Window) set() bool { return w.calls > 0 || w.d > 0 }

// LastCalls is the window of the last n calls, resilience4j's count-based
// sliding window. It panics if n is less than 1.
func LastCalls(n int) Window {
	if n < 1 {
		panic(fmt.Sprintf("breaker.LastCalls: n must be at least 1, got %d", n))
	}
	return Window{calls: n}
}

// LastDuration is the window of the calls that ended in about the last d:
// time is cut into 10 buckets of d/10 each (1ns at least), as Polly and
// Linkerd do, and a call counts while its bucket is one of the last 10,
// so for between 9/10 of d and d after it ended. Buckets expire as calls
// end, with no goroutine. It panics if d is not positive.
func LastDuration(d time.Duration) Window {
	if d <= 0 {
		panic(fmt.Sprintf("breaker.LastDuration: d must be positive, got %v", d))
	}
	return Window{d: d}
}

// WithFailureRatio makes the breaker trip, from closed to open, at a
// failure that brings the share of failures among the calls of window w
// to ratio or above, once w holds at least minCalls calls: a window with
// fewer says too little to act on. Polly's defaults are
// WithFailureRatio(0.1, 100, LastDuration(30*time.Second)); resilience4j's
// are WithFailureRatio(0.5, 100, LastCalls(100)). The window starts empty
// each time the breaker closes. Given alone it is the only trip condition;
// given with [WithConsecutiveFailures], the breaker trips on whichever
// comes first. A ratio of 0 trips at any failure once minCalls calls are
// in the window.
//
// It panics if ratio is outside [0, 1] (or NaN), if minCalls is less than
// 1 or, for a LastCalls(n) window, more than n (it could never be
// reached), or if w is the zero Window.
func WithFailureRatio(ratio float64, minCalls int, w Window) Option {
	const fn = "breaker.WithFailureRatio"
	if !(ratio >= 0 && ratio <= 1) {
		panic(fmt.Sprintf("%s: ratio must be between 0 and 1, got %v", fn, ratio))
	}
	if !w.set() {
		panic(fn + ": w is the zero Window; use LastCalls or LastDuration")
	}
	if minCalls < 1 {
		panic(fmt.Sprintf("%s: minCalls must be at least 1, got %d", fn, minCalls))
	}
	if w.calls > 0 && minCalls > w.calls {
		panic(fmt.Sprintf("%s: minCalls must be at most the window's %d calls, got %d", fn, w.calls, minCalls))
	}
	return func(o *options) { o.ratio, o.minCalls, o.window = ratio, minCalls, w }
}

// WithOpenDelay sets how long the breaker stays open before it lets a
// probe through: base after a first trip, doubled at each trip that
// follows without the breaker closing in between (a probe that fails),
// and at most max: min(base·2^(trips-1), max), then jittered (see
// [WithJitter]). It starts again from base once the breaker closes. The
// default is DefaultOpenDelay (5s) up to DefaultMaxOpenDelay (300s). It
// panics if base is not positive or max is less than base.
func WithOpenDelay(base, max time.Duration) Option {
	const fn = "breaker.WithOpenDelay"
	if base <= 0 {
		panic(fmt.Sprintf("%s: base must be positive, got %v", fn, base))
	}
	if max < base {
		panic(fmt.Sprintf("%s: max must not be less than base, got base %v and max %v", fn, base, max))
	}
	return func(o *options) { o.base, o.max = base, max }
}

// WithJitter sets the share of the open delay drawn at random, so that
// the breakers of many clients that tripped together do not probe
// together: a delay d of [WithOpenDelay] becomes d - fraction·r·d, with r
// uniform in [0, 1), so it lies in (d·(1-fraction), d], and never above
// the max. 0 is no jitter. The default is DefaultJitter (0.5): between
// half the delay and all of it. It panics if fraction is outside [0, 1]
// (or NaN).
func WithJitter(fraction float64) Option {
	if !(fraction >= 0 && fraction <= 1) {
		panic(fmt.Sprintf("breaker.WithJitter: fraction must be between 0 and 1, got %v", fraction))
	}
	return func(o *options) { o.jitter = fraction }
}

// WithRandom sets the source of the jitter's random numbers, which must
// return a number in [0, 1) and be safe for concurrent use: a test gives
// a fixed one to know the delays exactly. The default is
// math/rand/v2.Float64. It runs under the breaker's lock, as a trip
// happens, and must not call the breaker; a panic in it goes up to the
// caller whose result tripped the breaker, and the breaker stays as it
// was. It panics if random is nil.
func WithRandom(random func() float64) Option {
	if random == nil {
		panic("breaker.WithRandom: nil random")
	}
	return func(o *options) { o.random = random }
}

// WithProbes sets how many probes a half-open breaker lets through at
// once: that many probe permits, at most, exist at a time, from Ready
// until their call ends or they are released; a permit released unused
// gives its place back. The default is 1, as in Finagle and Linkerd. It
// panics if n is less than 1.
func WithProbes(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("breaker.WithProbes: n must be at least 1, got %d", n))
	}
	return func(o *options) { o.probes = n }
}

// WithSuccesses sets how many probes must succeed for a half-open breaker
// to close; one that fails opens it again. The default is 1. It panics if
// n is less than 1.
func WithSuccesses(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("breaker.WithSuccesses: n must be at least 1, got %d", n))
	}
	return func(o *options) { o.successes = n }
}

// WithBudget makes each probe draw on b: a half-open breaker lets a probe
// through only if b.Withdraw() succeeds, so that the retries, hedges and
// probes of one client, given one budget, add no more than it allows
// together. The breaker withdraws and never deposits: the retry policy
// that shares b deposits for the client's requests.
//
// When the open delay has ended and b refuses the first probe, the breaker
// stays open for another delay as long as the last one (not grown: no
// probe failed). When it refuses a later probe of a half-open breaker, the
// Ready waits for a probe under way to end, or, if none is, the breaker
// opens again for a delay as long as the last one. Withdraw runs under
// the breaker's lock and must not call the breaker; a panic in it goes up
// to the caller of Ready, which holds nothing.
//
// The default, and a nil b, is no budget.
func WithBudget(b retry.Budget) Option {
	return func(o *options) {
		o.budget = b
		if isnil.Is(b) {
			o.budget = nil
		}
	}
}

// WithMetrics makes the breaker report to sink: [metrics.Open] +1 as it
// leaves the closed state and -1 as it closes again, and
// [metrics.Tripped] +1 at each transition to open, from closed or from
// half-open. They are reported with the transitions, in order, on the
// goroutine that tells [WithStateChange]'s callback, outside the lock.
// The default, and a nil sink, is no metrics.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) {
		o.sink = sink
		if isnil.Is(sink) {
			o.sink = nil
		}
	}
}

// WithStateChange makes the breaker call f at each change of state, from
// and to, in the order of the changes and one at a time, outside the
// breaker's lock, on the goroutine of a caller whose Ready or call made a
// change (not always the one that made this one). A panic in f goes up to
// that caller; the changes after it are told with the next change. The
// default, and a nil f, is none.
func WithStateChange(f func(from, to State)) Option {
	return func(o *options) { o.onChange = f }
}

// delay returns the open delay after the trips-th trip in a row, jittered
// with r in [0, 1).
func (o *options) delay(trips int, r float64) time.Duration {
	d := o.max
	if o.base <= o.max>>(trips-1) {
		d = o.base << (trips - 1)
	}
	return d - time.Duration(o.jitter*r*float64(d))
}
