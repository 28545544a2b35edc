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
	// InFlight is up-down: requests from the grant of their reservation to
	// the end of their call, or to the release of the reservation unused.
	InFlight Kind = iota + 1
	// Waiting is up-down: callers waiting for capacity, in Ready (a permit,
	// a window, a token, a queue slot) or in Call (a per-key token).
	Waiting
	// Queued is up-down: requests queued, or in their turn, waiting for the
	// inner service to be ready.
	Queued
	// Shed is a counter: requests turned away at once, unsent, because the
	// service had no capacity for them.
	Shed
	// TimedOut is a counter: calls ended by their time limit.
	TimedOut
	// Retried is a counter: retries sent, not counting first attempts.
	Retried
	// Hedged is a counter: hedges sent, not counting originals.
	Hedged
	// Excluded is up-down: addresses a discovery's last lookup left out of
	// the set for being beyond its cap, reported as the change from one
	// lookup to the next.
	Excluded
	// Limit is up-down: the current limit of a limiter that moves it,
	// reported as the first limit and then each change.
	Limit
	// Open is up-down: circuit breakers open or half-open now.
	Open
	// Tripped is a counter: times a breaker opened, from closed or
	// half-open.
	Tripped
	// Ejected is up-down: endpoints a balancer's outlier detection holds
	// out of its set now.
	Ejected
	// Throttled is a counter: requests failed at once, unsent, because
	// their sender, or their key, went over its rate.
	Throttled
)

// NumKinds is one more than the largest Kind: a Sink that keeps a value per
// Kind can index an array of NumKinds by Kind.
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

// String returns the Kind's name, such as "InFlight", or "Kind(n)" for a
// value that is not one of the constants.
func (k Kind) String() string {
	if k > 0 && int(k) < NumKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// UpDown reports whether k goes up and down (InFlight, Waiting, Queued,
// Excluded, Limit, Open, Ejected) rather than only up.
func (k Kind) UpDown() bool {
	return k == InFlight || k == Waiting || k == Queued || k == Excluded || k == Limit || k == Open || k == Ejected
}

// A Sink receives the measurements of the middleware it is given to with
// their WithMetrics option, to keep a running sum per Kind and the
// latencies by Outcome for a monitoring system to read. It runs on the
// request path, on the caller's goroutine, never under a middleware's
// lock: it must be safe for concurrent use, and cheap. It should ignore a
// Kind it does not know, so that kinds can be added.
type Sink interface {
	// Add adds delta to the kind's count: +1 or -1 for an up-down kind
	// that counts requests or breakers, +1 for a counter, the change for
	// Excluded and Limit.
	Add(k Kind, delta int64)
	// Observe records the latency of one call, as the metrics layer
	// measured it (see [New]), and how the call ended. Keep the latencies
	// of served calls apart from the others (see [Outcome]).
	Observe(latency time.Duration, outcome Outcome)
}
