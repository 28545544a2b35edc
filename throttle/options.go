package throttle

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
)

// The defaults, and where they come from.
const (
	// DefaultK is the multiplier K of the accepts: a client sends up to K
	// times as many requests as the backend accepts before it starts
	// rejecting any itself. 2 is the SRE book's choice (chapter 21), and
	// the one Finagle's NackAdmissionFilter makes (nack rate threshold 0.5,
	// which is K = 1/(1−0.5)).
	DefaultK = 2.0
	// DefaultWindow is how far back requests and accepts are counted: the
	// SRE book's two minutes, and Finagle's.
	DefaultWindow = 2 * time.Minute
	// DefaultMaxRejection caps the probability of rejecting a request: at
	// least one request in ten reaches the backend however long it has
	// been refusing, so that the throttle sees it recover within seconds
	// rather than windows. failsafe-go's adaptive throttler caps at 0.9 as
	// well; Envoy's admission control caps at 0.8, and Finagle at 0.75.
	DefaultMaxRejection = 0.9
)

// A Rand is the random source a Throttle draws its rejections from:
// Float64 returns a number in [0, 1), as *rand.Rand's of math/rand/v2
// does. A request is rejected when the number drawn for it is below the
// rejection probability.
type Rand interface {
	Float64() float64
}

// globalRand is math/rand/v2's top-level source, safe for concurrent use.
type globalRand struct{}

func (globalRand) Float64() float64 { return rand.Float64() }

// An Option configures a Throttle.
type Option func(*options)

type options struct {
	k, maxReject float64
	window       time.Duration
	rand         Rand
	sink         metrics.Sink
}

// WithK sets the multiplier K of the accepts (default [DefaultK]): a
// request is rejected with probability (requests − K·accepts) /
// (requests + 1), so a client sends the backend up to K times what it
// accepts. A lower K rejects sooner and wastes less of the backend's work
// on refusals; a higher K lets more through, so that the backend sees
// sooner when it can take more. It panics unless k >= 1 and finite: below
// 1, a backend that accepts every request would still have some of them
// rejected (with K = 0.5, nearly half).
func WithK(k float64) Option {
	if !(k >= 1) || math.IsInf(k, 1) {
		panic(fmt.Sprintf("throttle.WithK: k must be a finite number at least 1, got %v", k))
	}
	return func(o *options) { o.k = k }
}

// WithWindow sets how far back requests and accepts are counted (default
// [DefaultWindow]). The window is kept as 120 buckets of d/120 each,
// rounded down to the nanosecond (or d buckets of 1ns if d is shorter
// than 120ns), the first starting when the
// throttle is made: a count leaves the window when its bucket does,
// between d−d/120 and d after it was made. A shorter window follows a
// change of the backend sooner, and decides on fewer requests. It panics
// unless d > 0.
func WithWindow(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("throttle.WithWindow: d must be positive, got %v", d))
	}
	return func(o *options) { o.window = d }
}

// WithMaxRejection caps the probability of rejecting a request at p
// (default [DefaultMaxRejection]). The formula never reaches 1, since
// requests − K·accepts < requests + 1, but it comes close: after a window
// of refusals, with nothing accepted, a request passes with probability
// 1/(requests+1), which is about one request per window whatever the
// rate. The backend then waits that long to be asked again once it has
// recovered. Below 1, the cap keeps a share 1−p of the traffic going to
// the backend, so that its recovery shows within seconds. A cap of 0
// turns rejection off, while the throttle still counts. It panics unless
// p is in [0, 1].
func WithMaxRejection(p float64) Option {
	if !(p >= 0 && p <= 1) {
		panic(fmt.Sprintf("throttle.WithMaxRejection: p must be between 0 and 1, got %v", p))
	}
	return func(o *options) { o.maxReject = p }
}

// WithRand makes the Throttle draw its rejections from r instead of
// math/rand/v2's global source: give a seeded one for results that
// repeat. r is called without any lock, from every caller of Ready, so it
// must be safe for concurrent use if the Throttle is; it is called only
// when the rejection probability is above 0. A panic in r goes up to the
// caller of Ready. It panics if r is nil or holds a nil pointer.
func WithRand(r Rand) Option {
	if isnil.Is(r) {
		panic("throttle.WithRand: nil Rand")
	}
	return func(o *options) { o.rand = r }
}

// WithMetrics makes the Throttle report to sink: Throttled +1 for each
// request it rejects, when the permit that rejects it is called (a
// rejecting permit released unused rejected nobody). The default, and a
// nil sink, is no metrics.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) { o.sink = sink }
}

// newOptions applies opts, over the defaults, for the function named fn.
func newOptions(fn string, opts []Option) options {
	o := options{k: DefaultK, maxReject: DefaultMaxRejection, window: DefaultWindow, rand: globalRand{}}
	option.Onto(fn, &o, opts)
	return o
}
