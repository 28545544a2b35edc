package adaptive

import (
	"fmt"
	"time"
)

// AIMDOption configures [AIMD].
type AIMDOption func(*aimd)

// AIMDBackoff sets the factor a window with a drop, or too slow, multiplies
// the limit by: between 0.5 and 1 (excluded). The default is 0.9, Netflix's.
func AIMDBackoff(ratio float64) AIMDOption {
	if !(ratio >= 0.5 && ratio < 1) {
		panic(fmt.Sprintf("adaptive.AIMDBackoff: ratio must be at least 0.5 and below 1, got %v", ratio))
	}
	return func(a *aimd) { a.backoff = ratio }
}

// AIMDTimeout sets the mean latency above which a window counts as a drop
// even if no call was dropped. It must be positive; the default is 5s,
// Netflix's. A server, whose calls are seldom dropped before its clients
// have long given up, sets it to the mean latency it accepts: about half
// its latency objective (see [AIMD]).
func AIMDTimeout(d time.Duration) AIMDOption {
	if d <= 0 {
		panic(fmt.Sprintf("adaptive.AIMDTimeout: d must be positive, got %v", d))
	}
	return func(a *aimd) { a.timeout = d }
}

type aimd struct {
	backoff float64
	timeout time.Duration
}

// AIMD is the loss-based algorithm of Netflix's AIMDLimit, TCP's
// additive increase, multiplicative decrease: a window with a drop, or
// whose mean latency (less the process's own delay; see [WithOwnDelay])
// is above the timeout, multiplies the limit by the
// backoff ratio; any other window in which the requests in flight reached
// half the limit adds 1 to it. It ignores latency below the timeout, so
// with the defaults it suits a client, which sees the server's drops. A
// server gives it a timeout of about half its latency objective
// ([AIMDTimeout]); its limit then saws around the concurrency that makes
// that mean latency. (With 5s, a server of 10ms requests under twice the
// load it can take sees no drop before its clients' own timeouts, and
// lets in far more than it serves in time.) It returns the function that [New] and [NewLayer] take, which makes
// a fresh one, with these settings and no state, each time it is called.
// It panics if an option is nil.
func AIMD(opts ...AIMDOption) func() Algorithm {
	template := newAIMD(opts)
	return func() Algorithm {
		alg := *template
		return &alg
	}
}

// newAIMD returns the algorithm with opts, for AIMD.
func newAIMD(opts []AIMDOption) *aimd {
	a := &aimd{backoff: 0.9, timeout: 5 * time.Second}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("adaptive.AIMD: option %d is nil", i))
		}
		o(a)
	}
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
