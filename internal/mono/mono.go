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
// the wall clock as well. Only differences of readings mean anything
// (inside a testing/synctest bubble, they follow its fake clock).
func Now() time.Duration { return time.Since(base) }

// Time returns the instant of the reading d as a time.Time that carries a
// monotonic reading, so that time.Until and Sub use the monotonic clock,
// and Of gives d back. Its wall clock part is off by as much as the wall
// clock has been stepped since the program started.
func Time(d time.Duration) time.Time { return base.Add(d) }

// Of returns t on the scale of Now's readings, without reading the clock,
// if t carries a monotonic reading (as time.Now's and context.WithTimeout's
// deadline do). It returns false for a time with none, such as one built
// from a date.
func Of(t time.Time) (time.Duration, bool) {
	if t == t.Round(0) {
		return 0, false // Round(0) strips the monotonic reading, and only that
	}
	return t.Sub(base), true
}

// Add returns the reading d after t, or the largest reading if that is
// beyond what a Duration holds, rather than wrap into the past. d must not
// be negative.
func Add(t, d time.Duration) time.Duration {
	if t > 0 && d > math.MaxInt64-t {
		return math.MaxInt64
	}
	return t + d
}

// Err returns ctx.Err(), or context.DeadlineExceeded once ctx's deadline
// has passed, which the clock tells a moment before the context's own
// timer does.
func Err(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}
