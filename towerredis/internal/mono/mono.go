// Package mono reads the monotonic clock cheaply, for middleware that
// times every request.
//
// It is a copy of the core module's internal/mono: a module imports no
// other module's internal packages, which may change in any release.
package mono

import "time"

var base = time.Now()

// Now returns a reading of the monotonic clock alone, where time.Now reads
// the wall clock as well. Only differences of readings mean anything; so a
// base taken outside a testing/synctest bubble cancels out of readings
// taken inside one, where time.Since follows the bubble's fake clock.
func Now() time.Duration { return time.Since(base) }

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
