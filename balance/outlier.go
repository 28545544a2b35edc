package balance

import (
	"math"
	"time"

	"github.com/towergo/tower/internal/option"
)

// The defaults of outlier detection are Envoy's (its
// outlier_detection.proto), each named for the option that changes it.
const (
	DefaultConsecutiveFailures      = 5                 // consecutive_5xx
	DefaultOutlierInterval          = 10 * time.Second  // interval
	DefaultBaseEjectionTime         = 30 * time.Second  // base_ejection_time
	DefaultMaxEjectionTime          = 300 * time.Second // max_ejection_time
	DefaultMaxEjectedShare          = 0.1               // max_ejection_percent: 10
	DefaultSuccessRateMinHosts      = 5                 // success_rate_minimum_hosts
	DefaultSuccessRateRequestVolume = 100               // success_rate_request_volume
	DefaultSuccessRateStdevFactor   = 1.9               // success_rate_stdev_factor: 1900, in thousandths
)

// An OutlierOption sets a parameter of [WithOutlierDetection].
type OutlierOption func(*outlierConfig)

type outlierConfig struct {
	failure     any // a func(Res, error) bool, checked by the constructor
	consecutive int64
	interval    time.Duration
	base        time.Duration
	max         time.Duration
	share       float64
	minHosts    int
	volume      int
	stdevFactor float64
}

// WithOutlierDetection makes the balancer eject, for a while, an endpoint
// whose calls fail more than the others', with Envoy's two detectors and
// defaults: too many failures in a row ([ConsecutiveFailures]), or a
// success rate over an interval too far below the others'
// ([SuccessRateStdevFactor]). failure says whether a call failed: err !=
// nil or a response that says the server failed (a 5xx), not an error
// that is the caller's (its context ended, its request was bad). It is
// called on the caller's goroutine once the call has returned, and must
// be safe for concurrent use; a panic in it goes up to the caller of Call.
//
// An ejected endpoint is not ready, so no pick sees it; one that was ready
// gives back its reservation at once. It comes back when its time is up,
// with a clean slate: calls with a permit taken before the ejection, or
// ended while it was out, do not count. Success rates compare endpoints
// with each other: when all fail, traffic still flows (put a circuit
// breaker outside for that), and when all nearly always succeed, one at
// 99% among others at 100% is an outlier. A call adds no allocation, and
// no lock while it succeeds. The handlers get the endpoint the Discover
// gave, not the wrapper that watches its calls.
//
// Res is the balancer's response type: the constructor panics if it is
// not. WithOutlierDetection panics if failure or an option is nil, or if
// MaxEjectionTime is shorter than BaseEjectionTime.
func WithOutlierDetection[Res any](failure func(res Res, err error) bool, opts ...OutlierOption) Option {
	const fn = "balance.WithOutlierDetection"
	option.PanicIf(failure == nil, "%s: nil failure classifier", fn)
	c := outlierConfig{
		failure:     failure,
		consecutive: DefaultConsecutiveFailures,
		interval:    DefaultOutlierInterval,
		base:        DefaultBaseEjectionTime,
		max:         DefaultMaxEjectionTime,
		share:       DefaultMaxEjectedShare,
		minHosts:    DefaultSuccessRateMinHosts,
		volume:      DefaultSuccessRateRequestVolume,
		stdevFactor: DefaultSuccessRateStdevFactor,
	}
	option.Onto(fn, &c, opts)
	option.PanicIf(c.max < c.base, "%s: MaxEjectionTime %v is shorter than BaseEjectionTime %v", fn, c.max, c.base)
	return func(o *options) { o.outlier = &c }
}

// ConsecutiveFailures ejects an endpoint at the end of its n-th failed call
// in a row (a success starts the count again); 0 turns this detector off.
// An endpoint refused for [MaxEjectedShare] stays a candidate: each further
// failure tries again. The default is 5. It panics if n is negative.
func ConsecutiveFailures(n int) OutlierOption {
	option.PanicIf(n < 0, "balance.ConsecutiveFailures: n is %d, want 0 (off) or more", n)
	return func(c *outlierConfig) { c.consecutive = int64(n) }
}

// OutlierInterval is the length of the intervals over which success rates
// are compared; an endpoint's ejection multiplier drops by one for each
// interval it stays in. The default is 10s. It panics if d is not
// positive.
func OutlierInterval(d time.Duration) OutlierOption {
	option.PanicIf(d <= 0, "balance.OutlierInterval: d is %v, want more than 0", d)
	return func(c *outlierConfig) { c.interval = d }
}

// BaseEjectionTime is how long an endpoint is ejected the first time: its
// k-th ejection in a row lasts k times as long, up to MaxEjectionTime. The
// default is 30s. It panics if d is not positive.
func BaseEjectionTime(d time.Duration) OutlierOption {
	option.PanicIf(d <= 0, "balance.BaseEjectionTime: d is %v, want more than 0", d)
	return func(c *outlierConfig) { c.base = d }
}

// MaxEjectionTime caps how long one ejection lasts. The default is 300s.
// It panics if d is not positive; WithOutlierDetection panics if it is
// shorter than BaseEjectionTime.
func MaxEjectionTime(d time.Duration) OutlierOption {
	option.PanicIf(d <= 0, "balance.MaxEjectionTime: d is %v, want more than 0", d)
	return func(c *outlierConfig) { c.max = d }
}

// MaxEjectedShare caps the endpoints ejected at once to this share of the
// set, rounded down, but lets one out whatever the share, and never the
// last one in; an endpoint that leaves the set while out frees its place
// at once. The default is 0.1. It panics if r is not in [0, 1].
func MaxEjectedShare(r float64) OutlierOption {
	option.PanicIf(!(r >= 0 && r <= 1), "balance.MaxEjectedShare: r is %v, want a ratio in [0, 1]", r)
	return func(c *outlierConfig) { c.share = r }
}

// SuccessRateMinHosts is how many endpoints must have had the request
// volume in an interval for their success rates to be compared; 0 turns
// the success-rate detector off. The default is 5. It panics if n is
// negative.
func SuccessRateMinHosts(n int) OutlierOption {
	option.PanicIf(n < 0, "balance.SuccessRateMinHosts: n is %d, want 0 (off) or more", n)
	return func(c *outlierConfig) { c.minHosts = n }
}

// SuccessRateRequestVolume is how many calls an endpoint must have ended
// in an interval for its success rate to count. The default is 100. It
// panics if n is less than 1.
func SuccessRateRequestVolume(n int) OutlierOption {
	option.PanicIf(n < 1, "balance.SuccessRateRequestVolume: n is %d, want 1 or more", n)
	return func(c *outlierConfig) { c.volume = n }
}

// SuccessRateStdevFactor makes an endpoint an outlier when its success
// rate in an interval is below the mean minus f (population) standard
// deviations; outliers are ejected at the interval's end, worst first. The
// default is 1.9. It panics if f is not positive and finite.
func SuccessRateStdevFactor(f float64) OutlierOption {
	option.PanicIf(!(f > 0 && f <= math.MaxFloat64), "balance.SuccessRateStdevFactor: f is %v, want a finite number more than 0", f)
	return func(c *outlierConfig) { c.stdevFactor = f }
}
