package retry

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/towergo/tower/internal/option"
)

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
// larger or overflows; jitter is a uniformly random fraction in [0, 1) of
// jitter·base, cut to max-base, so the wait never exceeds max. With a
// jitter of 1 the wait lies in [base, 2·base).
//
// An ExponentialBackoff is safe for concurrent use. Its zero value is not
// usable; build one with [NewExponentialBackoff].
type ExponentialBackoff struct {
	min, max time.Duration
	jitter   float64
	rand     func() float64 // in [0, 1)
}

// NewExponentialBackoff returns an ExponentialBackoff from min to max, with
// jitter the fraction of the base that may be added at random, between 0
// and 100 (0 for none, 1 for up to a full base). It panics if max is less
// than min, max is zero, min is negative, or jitter is outside [0, 100] or
// NaN.
func NewExponentialBackoff(min, max time.Duration, jitter float64) *ExponentialBackoff {
	const fn = "retry.NewExponentialBackoff"
	validate(fn, min, max)
	if !(jitter >= 0 && jitter <= 100) { // NaN fails both
		panic(fmt.Sprintf("%s: jitter must be between 0 and 100, got %v", fn, jitter))
	}
	return &ExponentialBackoff{min: min, max: max, jitter: jitter, rand: rand.Float64}
}

// validate panics, naming fn, unless 0 <= min <= max and max > 0.
func validate(fn string, min, max time.Duration) {
	option.PanicIf(min > max, "%s: max must not be less than min, got min %v and max %v", fn, min, max)
	if max == 0 {
		panic(fn + ": max must not be zero")
	}
	option.PanicIf(min < 0, "%s: min must not be negative, got %v", fn, min)
}

// Delay returns the wait after attempt number attempt (below 1 counts as 1).
func (b *ExponentialBackoff) Delay(attempt int) time.Duration {
	base := exponential(b.min, b.max, attempt)
	return base + b.jitterFor(base)
}

// exponential returns min·2^(attempt-1), or max if that is larger or
// overflows; an attempt below 1 counts as 1.
func exponential(min, max time.Duration, attempt int) time.Duration {
	it := 0
	if attempt > 1 {
		it = attempt - 1 // never attempt-1 of math.MinInt, which wraps around
	}
	if min > max>>it { // for it >= 63, max>>it is 0
		return max
	}
	return min << it
}

// jitterFor returns a random fraction of jitter·base, at most max-base, of
// the whole Duration as tower's doc says (tower's code truncates to seconds).
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

// FullJitterBackoff is the "full jitter" backoff of gRPC and AWS: the wait
// after attempt n is uniformly random in [0, min(max, min·2^(n-1))). Unlike
// [ExponentialBackoff], it may retry at once; it spreads the retries of
// callers that failed together the most.
//
// A FullJitterBackoff is safe for concurrent use. Its zero value is not
// usable; build one with [NewFullJitterBackoff].
type FullJitterBackoff struct {
	min, max time.Duration
	rand     func() float64 // in [0, 1)
}

// NewFullJitterBackoff returns a FullJitterBackoff from min to max. It
// panics if max is less than min, max is zero, or min is negative.
func NewFullJitterBackoff(min, max time.Duration) *FullJitterBackoff {
	validate("retry.NewFullJitterBackoff", min, max)
	return &FullJitterBackoff{min: min, max: max, rand: rand.Float64}
}

// Delay returns the wait after attempt number attempt (below 1 counts as 1).
func (b *FullJitterBackoff) Delay(attempt int) time.Duration {
	return time.Duration(b.rand() * float64(exponential(b.min, b.max, attempt)))
}
