package metrics

import (
	"fmt"
	"time"
)

// Kind says what a measurement counts: an up-down kind reads as the number
// in a state now, a counter only goes up. The package doc has a table of
// when each kind changes.
type Kind uint8

const (
	InFlight Kind = iota + 1
	Waiting
	Queued
	Shed
	TimedOut
	Retried
	Hedged
	Excluded
	Limit
	Open
	Tripped
	Ejected
	Throttled
)

// NumKinds is one more than the largest Kind, to size an array indexed by
// Kind.
const NumKinds = int(Throttled) + 1

var kindNames = [NumKinds]string{
	InFlight:  "InFlight",
	Waiting:   "Waiting",
	Queued:    "Queued",
	Shed:      "Shed",
	TimedOut:  "TimedOut",
	Retried:   "Retried",
	Hedged:    "Hedged",
	Excluded:  "Excluded",
	Limit:     "Limit",
	Open:      "Open",
	Tripped:   "Tripped",
	Ejected:   "Ejected",
	Throttled: "Throttled",
}

// String returns the Kind's name, "InFlight", or "Kind(n)" if unknown.
func (k Kind) String() string { return name(k, "Kind", kindNames[:]) }

// name returns names[v], or typ(v) for a value without a name.
func name[T ~uint8](v T, typ string, names []string) string {
	if v > 0 && int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, uint8(v))
}

// UpDown reports whether k goes up and down rather than only up.
func (k Kind) UpDown() bool {
	return k == InFlight || k == Waiting || k == Queued || k == Excluded || k == Limit || k == Open || k == Ejected
}

// A Sink receives the measurements of the middleware it is given to with
// their WithMetrics option. It runs on the request path, on the caller's
// goroutine, never under a middleware's lock: it must be safe for
// concurrent use, and cheap. It should ignore a Kind it does not know, so
// that kinds can be added.
type Sink interface {
	// Add adds delta to the kind's count, as the package doc's table says.
	Add(k Kind, delta int64)
	// Observe records the latency of one call, as the metrics layer
	// measured it (see [New]), and how the call ended.
	Observe(latency time.Duration, outcome Outcome)
}
