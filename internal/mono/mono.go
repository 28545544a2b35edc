// Package mono reads the monotonic clock cheaply, for middleware that time
// every request.
package mono

import (
	"context"
	"math"
	"time"
)

var base = time.Now()

// Now returns a reading of the monotonic clock alone, where time.Now reads
// the wall clock as well. Only differences of readings mean anything; so a
// base taken outside a testing/synctest bubble cancels out of readings
// taken inside one, where time.Since follows the bubble's fake clock.
func Now() time.Duration { return time.Since(base) }

// Time returns the instant of the reading d as a time.Time that carries a
// monotonic reading, so that time.Until and Sub use the monotonic clock,
// and Of gives d back. Its wall clock part is off by as much as the wall
// clock has been stepped since the program started (inside a
// testing/synctest bubble, it is the bubble's).
func Time(d time.Duration) time.Time { return base.Add(d) }

// Of returns t on the scale of Now's readings, without reading the clock,
// if t carries a monotonic reading (a time from time.Now, or one added to,
// as context.WithTimeout's deadline is). It returns false for a time with
// none (one built from a date, or with Round(0)), whose distance from now
// only the wall clock can tell.
func Of(t time.Time) (time.Duration, bool) {
	if t == t.Round(0) {
		return 0, false // Round(0) strips the monotonic reading, and only that
	}
	return t.Sub(base), true
}

// Add returns the reading d after t, or the largest reading if that is
// beyond what a Duration holds: a deadline or a window's end that far
// away never comes, and must not wrap around into the past. d must not be
// negative.
func Add(t, d time.Duration) time.Duration {
	if t > 0 && d > math.MaxInt64-t {
		return math.MaxInt64
	}
	return t + d
}

// Err returns ctx.Err(), or context.DeadlineExceeded once ctx's deadline
// has passed, which the clock tells a moment before the context's own
// timer does: a caller whose deadline is reached must not start more work
// in that moment.
func Err(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}
