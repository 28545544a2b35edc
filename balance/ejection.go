package balance

import (
	"fmt"
	"strconv"
	"time"
)

// An EjectionReason says which detector ejected an endpoint.
type EjectionReason uint8

const (
	// ReasonConsecutiveFailures: the endpoint failed ConsecutiveFailures
	// calls in a row.
	ReasonConsecutiveFailures EjectionReason = iota + 1
	// ReasonSuccessRate: the endpoint's success rate over an interval was
	// an outlier among the endpoints'.
	ReasonSuccessRate
)

// String returns "consecutive failures" or "success rate", or
// "EjectionReason(n)" for a value that is neither.
func (r EjectionReason) String() string {
	if r == ReasonConsecutiveFailures {
		return "consecutive failures"
	}
	if r == ReasonSuccessRate {
		return "success rate"
	}
	return "EjectionReason(" + strconv.Itoa(int(r)) + ")"
}

// An Ejection reports an endpoint that outlier detection
// ([WithOutlierDetection]) has ejected, to the error handler and the
// logger. Its return is not reported (the metric Ejected counts it). K is
// the Discover's key type.
type Ejection[K comparable] struct {
	Key      K              // the endpoint's key
	Reason   EjectionReason // which detector ejected it
	Duration time.Duration  // how long it is out
	// Err is, for consecutive failures, the error of the call that made
	// the count, or nil if the classifier failed it for its response.
	Err error
	// SuccessRate and Threshold are, for a success-rate ejection, the
	// endpoint's success rate in the interval and the rate below which an
	// endpoint was an outlier; zero otherwise.
	SuccessRate, Threshold float64
}

// Error describes the ejection: "load balancer ejected endpoint 3 for 30s:
// consecutive failures: " and the last error, or "... : success rate 0.5
// below 0.84".
func (e *Ejection[K]) Error() string {
	s := fmt.Sprintf("load balancer ejected endpoint %v for %v: %v", e.Key, e.Duration, e.Reason)
	if e.Reason == ReasonSuccessRate {
		return s + " " + strconv.FormatFloat(e.SuccessRate, 'g', 4, 64) + " below " + strconv.FormatFloat(e.Threshold, 'g', 4, 64)
	}
	if e.Err != nil {
		return s + ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns Err.
func (e *Ejection[K]) Unwrap() error { return e.Err }
