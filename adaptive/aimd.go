package adaptive

import (
	"time"

	"github.com/towergo/tower/internal/option"
)

// AIMDOption configures [AIMD].
type AIMDOption func(*aimd)

// AIMDBackoff sets the factor a window with a drop, or too slow, multiplies
// the limit by (default 0.9, Netflix's). It panics unless
// 0.5 <= ratio < 1.
func AIMDBackoff(ratio float64) AIMDOption {
	option.PanicIf(!(ratio >= 0.5 && ratio < 1), "adaptive.AIMDBackoff: ratio must be at least 0.5 and below 1, got %v", ratio)
	return func(a *aimd) { a.backoff = ratio }
}

// AIMDTimeout sets the mean latency above which a window counts as a drop
// (default 5s, Netflix's). A server, whose calls are seldom dropped before
// its clients give up, sets it to about half its latency objective. It
// panics unless d is positive.
func AIMDTimeout(d time.Duration) AIMDOption {
	option.PanicIf(d <= 0, "adaptive.AIMDTimeout: d must be positive, got %v", d)
	return func(a *aimd) { a.timeout = d }
}

type aimd struct {
	backoff float64
	timeout time.Duration
}

// AIMD is the loss-based algorithm of Netflix's AIMDLimit, TCP's additive
// increase, multiplicative decrease: a window with a drop, or whose mean
// latency less the process's own delay is above the timeout, multiplies
// the limit by the backoff; any other window whose requests in flight
// reached half the limit adds 1. With the default 5s timeout it ignores
// latency, which suits a client that sees the server's drops; a server
// sets [AIMDTimeout].
//
// It returns a constructor of fresh algorithms, and panics if an option is nil.
func AIMD(opts ...AIMDOption) func() Algorithm {
	template := newAIMD(opts)
	return func() Algorithm {
		alg := *template
		return &alg
	}
}

func newAIMD(opts []AIMDOption) *aimd {
	a := &aimd{backoff: 0.9, timeout: 5 * time.Second}
	option.Onto("adaptive.AIMD", a, opts)
	return a
}

func (a *aimd) Update(limit float64, s Sample) float64 {
	if s.Dropped > 0 || (s.Timed > 0 && s.MeanLatency-s.OwnDelay > a.timeout) {
		return limit * a.backoff
	}
	if 2*float64(s.MaxInFlight) >= limit {
		return limit + 1
	}
	return limit
}
