// Package mono reads the monotonic clock cheaply, for middleware that time
// every request.
package mono

import "time"

var base = time.Now()

// Now returns a reading of the monotonic clock. It costs half as much as
// time.Now, which reads the wall clock as well. Only differences of
// readings mean anything; so a base taken outside a testing/synctest
// bubble cancels out of readings taken inside one, where time.Since
// follows the bubble's fake clock.
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
