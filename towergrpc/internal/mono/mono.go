// Package mono reads the monotonic clock cheaply, for timing every
// request. It is a copy of the core module's internal/mono, which a module
// cannot import.
package mono

import "time"

var base = time.Now()

// Now returns a reading of the monotonic clock alone, cheaper than
// time.Now; only differences of readings mean anything. Inside a
// testing/synctest bubble it follows the bubble's fake clock.
func Now() time.Duration { return time.Since(base) }
