// Package mono reads the monotonic clock cheaply. It is a copy of the core
// module's internal/mono, which another module may not import.
package mono

import "time"

var base = time.Now()

// Now returns a reading of the monotonic clock alone, where time.Now reads
// the wall clock as well. Only differences of readings mean anything (so
// they follow a testing/synctest bubble's fake clock).
func Now() time.Duration { return time.Since(base) }

// Of returns t on the scale of Now's readings, without reading the clock,
// if t carries a monotonic reading (as one from time.Now, or a deadline of
// context.WithTimeout, does); otherwise false.
func Of(t time.Time) (time.Duration, bool) {
	if t == t.Round(0) {
		return 0, false // Round(0) strips the monotonic reading, and only that
	}
	return t.Sub(base), true
}
