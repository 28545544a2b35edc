// Package mono reads the monotonic clock cheaply, for middleware that time
// every request.
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
