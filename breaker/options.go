package breaker

import (
	"math/rand/v2"
	"time"

	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/retry"
)

// The defaults.
const (
	// DefaultConsecutiveFailures is the trip condition of a breaker given
	// neither [WithConsecutiveFailures] nor [WithFailureRatio]: it trips
	// at any rate of traffic, but misses a partial outage.
	DefaultConsecutiveFailures = 5
	// DefaultOpenDelay is the open delay after a first trip.
	DefaultOpenDelay = 5 * time.Second
	// DefaultMaxOpenDelay caps the open delay as trips follow one another.
	DefaultMaxOpenDelay = 300 * time.Second
	// DefaultJitter is the share of the open delay drawn at random.
	DefaultJitter = 0.5
)

// An Option configures a [Breaker].
type Option func(*options)

type options struct {
	consecutive int // failures in a row that trip; 0: none
	ratio       float64
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
	if o.consecutive == 0 && o.window == (Window{}) {
		o.consecutive = DefaultConsecutiveFailures
	}
	return o
}

// WithConsecutiveFailures makes the breaker trip at the nth failure in a
// row; a success in between starts the count again. The default is
// [DefaultConsecutiveFailures], unless [WithFailureRatio] is given. It
// panics if n is less than 1.
func WithConsecutiveFailures(n int) Option {
	atLeastOne("breaker.WithConsecutiveFailures", "n", n)
	return func(o *options) { o.consecutive = n }
}

// A Window is where [WithFailureRatio] measures the failure ratio: the
// last calls, by number ([LastCalls]) or by time ([LastDuration]). The
// zero Window is none, which WithFailureRatio refuses.
type Window struct {
	calls int           // the last calls calls, if > 0
	d     time.Duration // the last d, if > 0
}

// LastCalls is the window of the last n calls. It panics if n is less
// than 1.
func LastCalls(n int) Window {
	atLeastOne("breaker.LastCalls", "n", n)
	return Window{calls: n}
}

// LastDuration is the window of the calls that ended in about the last d:
// time is cut into 10 buckets of d/10 (1ns at least), and a call counts
// while its bucket is one of the last 10, so for between 9/10 of d and d
// after it ended. It panics if d is not positive.
func LastDuration(d time.Duration) Window {
	option.PanicIf(d <= 0, "breaker.LastDuration: d must be positive, got %v", d)
	return Window{d: d}
}

// WithFailureRatio makes the breaker trip at a failure that brings the
// share of failures among the calls of window w to ratio or above, once w
// holds at least minCalls calls. The window starts empty each time the
// breaker closes. It panics if ratio is outside [0, 1] (or NaN), if
// minCalls is less than 1 or, for a LastCalls(n) window, more than n, or
// if w is the zero Window.
func WithFailureRatio(ratio float64, minCalls int, w Window) Option {
	const fn = "breaker.WithFailureRatio"
	option.PanicIf(!(ratio >= 0 && ratio <= 1), "%s: ratio must be between 0 and 1, got %v", fn, ratio)
	if w == (Window{}) {
		panic(fn + ": w is the zero Window; use LastCalls or LastDuration")
	}
	atLeastOne(fn, "minCalls", minCalls)
	option.PanicIf(w.calls > 0 && minCalls > w.calls, "%s: minCalls must be at most the window's %d calls, got %d", fn, w.calls, minCalls)
	return func(o *options) { o.ratio, o.minCalls, o.window = ratio, minCalls, w }
}

// WithOpenDelay sets how long the breaker stays open before it lets a
// probe through: min(base·2^(trips-1), max) after the trips-th trip in a
// row, then jittered ([WithJitter]). The default is [DefaultOpenDelay] up
// to [DefaultMaxOpenDelay]. It panics if base is not positive or max is
// less than base.
func WithOpenDelay(base, max time.Duration) Option {
	const fn = "breaker.WithOpenDelay"
	option.PanicIf(base <= 0, "%s: base must be positive, got %v", fn, base)
	option.PanicIf(max < base, "%s: max must not be less than base, got base %v and max %v", fn, base, max)
	return func(o *options) { o.base, o.max = base, max }
}

// WithJitter sets the share of the open delay drawn at random, so that
// breakers that tripped together do not probe together: a delay d lies in
// (d·(1-fraction), d]. The default is [DefaultJitter]. It panics if
// fraction is outside [0, 1] (or NaN).
func WithJitter(fraction float64) Option {
	option.PanicIf(!(fraction >= 0 && fraction <= 1), "breaker.WithJitter: fraction must be between 0 and 1, got %v", fraction)
	return func(o *options) { o.jitter = fraction }
}

// WithRandom sets the source of the jitter's random numbers, in [0, 1);
// the default is math/rand/v2.Float64. It runs under the breaker's lock,
// so it must not call the breaker; a panic in it goes up to the caller
// whose result tripped the breaker, which stays as it was. It panics if
// random is nil.
func WithRandom(random func() float64) Option {
	option.PanicIf(random == nil, "breaker.WithRandom: nil random")
	return func(o *options) { o.random = random }
}

// WithProbes sets how many probe permits a half-open breaker has out at
// once. The default is 1. It panics if n is less than 1.
func WithProbes(n int) Option {
	atLeastOne("breaker.WithProbes", "n", n)
	return func(o *options) { o.probes = n }
}

// WithSuccesses sets how many probes must succeed for a half-open breaker
// to close. The default is 1. It panics if n is less than 1.
func WithSuccesses(n int) Option {
	atLeastOne("breaker.WithSuccesses", "n", n)
	return func(o *options) { o.successes = n }
}

// WithBudget makes each probe draw on b, which the client's retries and
// hedges may share; the breaker never deposits. When b refuses a probe,
// the Ready waits for a probe under way to end, or, if none is, the
// breaker stays open for another delay as long as the last. Withdraw runs
// under the breaker's lock and must not call the breaker; a panic in it
// goes up to the caller of Ready. The default, and a nil b, is no budget.
func WithBudget(b retry.Budget) Option {
	if isnil.Is(b) {
		b = nil
	}
	return func(o *options) { o.budget = b }
}

// WithMetrics makes the breaker report to sink, as [WithStateChange]'s
// callback is told: [metrics.Open] +1 as it leaves the closed state and -1
// as it closes again, and [metrics.Tripped] +1 at each transition to open.
// The default, and a nil sink, is no metrics.
func WithMetrics(sink metrics.Sink) Option {
	if isnil.Is(sink) {
		sink = nil
	}
	return func(o *options) { o.sink = sink }
}

// WithStateChange makes the breaker call f at each change of state, in
// order and one at a time, outside the breaker's lock, on the goroutine of
// a caller whose Ready or call made a change. A panic in f goes up to that
// caller; the changes after it are told with the next. The default, and a
// nil f, is none.
func WithStateChange(f func(from, to State)) Option {
	return func(o *options) { o.onChange = f }
}

// atLeastOne panics, naming fn and the parameter, if n is less than 1.
func atLeastOne(fn, param string, n int) {
	option.PanicIf(n < 1, "%s: %s must be at least 1, got %d", fn, param, n)
}

// delay returns the open delay after the trips-th trip, jittered with r.
func (o *options) delay(trips int, r float64) time.Duration {
	d := o.max
	if o.base <= o.max>>(trips-1) {
		d = o.base << (trips - 1)
	}
	return d - time.Duration(o.jitter*r*float64(d))
}
