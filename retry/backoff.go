package retry

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// ErrInvalidBackoff is the error of a backoff built with bad parameters.
// The errors the constructors return wrap it, and read as tower's
// InvalidBackoff does: "invalid backoff: maximum must not be less than
// minimum".
var ErrInvalidBackoff = errors.New("invalid backoff")

func invalidBackoff(msg string) error { return fmt.Errorf("%w: %s", ErrInvalidBackoff, msg) }

// A Backoff says how long to wait before each retry. Delay may return a
// different duration each time (jitter); it must be safe for concurrent
// use.
type Backoff interface {
	// Delay returns how long to wait after attempt number attempt (1 for
	// a request's first try) before the next attempt: pass [Attempt.N].
	Delay(attempt int) time.Duration
}

// ExponentialBackoff is tower's jittered exponential backoff. The wait
// after attempt n is base + jitter: base is min·2^(n-1), or max if that is
// larger or overflows (tower counts iterations from 0, n-1 here); jitter is
// a uniformly random fraction in [0, 1) of jitter·base, cut to max-base, so
// the wait never exceeds max. With a jitter of 1, the wait after attempt n
// lies anywhere in [base, 2·base): the jitter spans a full base, which
// spreads the retries of callers that failed together over the whole
// interval to the next doubling.
//
// The jitter scales the whole base. tower's implementation scales its
// whole seconds and its nanoseconds apart and truncates the first to whole
// seconds, so that a base of 1s gets no jitter at all with a jitter below
// 1; this one gives what tower documents.
//
// An ExponentialBackoff holds no state from request to request: the
// attempt number says where in the sequence a request is. It is safe for
// concurrent use. Its zero value is not usable; build one with
// [NewExponentialBackoff].
type ExponentialBackoff struct {
	min, max time.Duration
	jitter   float64
	rand     func() float64 // in [0, 1)
}

// NewExponentialBackoff returns an ExponentialBackoff from min to max, with
// jitter the fraction of the base that may be added at random, between 0
// and 100 (0 for none, 1 for up to a full base). Like tower's, it returns
// an error that wraps [ErrInvalidBackoff] if max is less than min, max is
// zero, or jitter is negative, greater than 100 or NaN (so infinities are
// refused); and, since a Duration can be negative, if min is.
func NewExponentialBackoff(min, max time.Duration, jitter float64) (*ExponentialBackoff, error) {
	if err := validate(min, max); err != nil {
		return nil, err
	}
	switch {
	case jitter < 0:
		return nil, invalidBackoff("jitter must not be negative")
	case jitter > 100:
		return nil, invalidBackoff("jitter must not be greater than 100")
	case math.IsNaN(jitter):
		return nil, invalidBackoff("jitter must not be NaN")
	}
	return &ExponentialBackoff{min: min, max: max, jitter: jitter, rand: rand.Float64}, nil
}

// validate checks min and max with tower's rules and messages, in tower's
// order, and refuses a negative min.
func validate(min, max time.Duration) error {
	switch {
	case min > max:
		return invalidBackoff("maximum must not be less than minimum")
	case max == 0:
		return invalidBackoff("maximum must be non-zero")
	case min < 0:
		return invalidBackoff("minimum must not be negative")
	}
	return nil
}

// Delay returns the wait after attempt number attempt: min·2^(attempt-1),
// at most max, plus jitter. An attempt below 1 counts as 1.
func (b *ExponentialBackoff) Delay(attempt int) time.Duration {
	base := b.base(attempt)
	return base + b.jitterFor(base)
}

// base is tower's ExponentialBackoff::base, for iterations = attempt-1:
// min·2^iterations, saturating, capped at max.
func (b *ExponentialBackoff) base(attempt int) time.Duration {
	return exponential(b.min, b.max, attempt)
}

func exponential(min, max time.Duration, attempt int) time.Duration {
	it := 0 // an attempt below 1 counts as 1
	if attempt > 1 {
		it = attempt - 1 // never attempt-1 of math.MinInt, which wraps around
	}
	if it >= 63 || min > max>>it {
		return max // min·2^it overflows or exceeds max
	}
	return min << it
}

// jitterFor is tower's ExponentialBackoff::jitter: a random fraction of
// jitter·base, no greater than max-base.
//
// tower scales a Duration's whole seconds and its nanoseconds apart and
// truncates the scaled seconds to whole seconds (Duration::new(secs as u64,
// nanos as u32)), so a base of 1s with a jitter of 1 never gets any jitter,
// and a base of 2s gets 0s or 1s; that breaks the property its own test
// states (some jitter whenever jitter, base and max-base are not 0). This
// scales the whole Duration, as tower's doc describes.
func (b *ExponentialBackoff) jitterFor(base time.Duration) time.Duration {
	if b.jitter == 0 {
		return 0
	}
	j := float64(base) * b.rand() * b.jitter
	remaining := b.max - base
	if j >= float64(remaining) {
		return remaining // also keeps the conversion below in range
	}
	return time.Duration(j)
}

// FullJitterBackoff is the "full jitter" backoff of gRPC and of the AWS
// Architecture Blog's "Exponential Backoff and Jitter": the wait after
// attempt n is uniformly random in [0, min(max, min·2^(n-1))). Unlike
// [ExponentialBackoff], whose wait never falls below the base, it may
// retry at once; it spreads the retries of callers that failed together
// the most, at the cost of some retries that come early.
//
// A FullJitterBackoff is safe for concurrent use. Its zero value is not
// usable; build one with [NewFullJitterBackoff].
type FullJitterBackoff struct {
	min, max time.Duration
	rand     func() float64 // in [0, 1)
}

// NewFullJitterBackoff returns a FullJitterBackoff from min to max. It
// returns an error that wraps [ErrInvalidBackoff] if max is less than min,
// max is zero, or min is negative, with [NewExponentialBackoff]'s messages.
func NewFullJitterBackoff(min, max time.Duration) (*FullJitterBackoff, error) {
	if err := validate(min, max); err != nil {
		return nil, err
	}
	return &FullJitterBackoff{min: min, max: max, rand: rand.Float64}, nil
}

// Delay returns a wait in [0, min(max, min·2^(attempt-1))). An attempt
// below 1 counts as 1.
func (b *FullJitterBackoff) Delay(attempt int) time.Duration {
	return time.Duration(b.rand() * float64(exponential(b.min, b.max, attempt)))
}
