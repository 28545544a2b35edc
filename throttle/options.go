package throttle

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
)

const (
	// DefaultK is the multiplier K of the accepts, the SRE book's.
	DefaultK = 2.0
	// DefaultWindow is how far back requests are counted, the SRE book's.
	DefaultWindow = 2 * time.Minute
	// DefaultMaxRejection caps the probability of rejecting a request: at
	// least one request in ten reaches the backend.
	DefaultMaxRejection = 0.9
)

// A Rand is the random source a Throttle draws its rejections from:
// Float64 returns a number in [0, 1), as math/rand/v2's *rand.Rand does.
type Rand interface {
	Float64() float64
}

// An Option configures a Throttle.
type Option func(*options)

type options struct {
	k, maxReject float64
	window       time.Duration
	rand         func() float64 // a Rand's Float64
	sink         metrics.Sink   // nil: no metrics
}

// WithK sets the multiplier K of the accepts (default [DefaultK]): a
// client sends the backend up to K times what it accepts. A lower K
// wastes less backend work on refusals; a higher K shows the backend's
// recovery sooner. It panics unless k >= 1 and finite.
func WithK(k float64) Option {
	option.PanicIf(!(k >= 1) || math.IsInf(k, 1), "throttle.WithK: k must be a finite number at least 1, got %v", k)
	return func(o *options) { o.k = k }
}

// WithWindow sets how far back requests and accepts are counted (default
// [DefaultWindow]). The window is kept as 120 buckets of d/120 (or d
// buckets of 1ns if d is shorter than 120ns), so a count leaves it between
// d−d/120 and d after it was made. It panics unless d > 0.
func WithWindow(d time.Duration) Option {
	option.PanicIf(d <= 0, "throttle.WithWindow: d must be positive, got %v", d)
	return func(o *options) { o.window = d }
}

// WithMaxRejection caps the probability of rejecting a request at p
// (default [DefaultMaxRejection]). Uncapped, after a window with nothing
// accepted about one request per window passes, and a recovered backend
// waits that long to be asked; a cap below 1 keeps a share 1−p of the
// traffic going. A cap of 0 turns rejection off. It panics unless p is in
// [0, 1].
func WithMaxRejection(p float64) Option {
	option.PanicIf(!(p >= 0 && p <= 1), "throttle.WithMaxRejection: p must be between 0 and 1, got %v", p)
	return func(o *options) { o.maxReject = p }
}

// WithRand makes the Throttle draw its rejections from r instead of
// math/rand/v2's global source. r is called without a lock from every
// caller of Ready while the rejection probability is above 0, so it must
// be safe for concurrent use if the Throttle is used so. It panics if r is
// nil or holds a nil pointer.
func WithRand(r Rand) Option {
	option.PanicIf(isnil.Is(r), "throttle.WithRand: nil Rand")
	return func(o *options) { o.rand = r.Float64 }
}

// WithMetrics makes the Throttle report to sink Throttled +1 for each
// request it rejects, when the rejecting permit is called (not when it is
// released unused). The default, and a nil sink, is no metrics.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) { o.sink = sink }
}

func newOptions(fn string, opts []Option) options {
	o := options{k: DefaultK, maxReject: DefaultMaxRejection, window: DefaultWindow, rand: rand.Float64}
	option.Onto(fn, &o, opts)
	return o
}
