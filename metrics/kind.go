package metrics

import (
	"fmt"
	"time"
)

// Kind says what a measurement counts. Up-down kinds go up and down as
// requests (or addresses) enter and leave a state, and read as the number
// in that state now; counters only go up.
type Kind uint8

const (
	// InFlight is up-down: requests from the grant of their reservation to
	// the end of their call, or to the release of the reservation unused.
	InFlight Kind = iota + 1
	// Waiting is up-down: callers waiting for capacity, in Ready (for a
	// permit, a window, a token, a queue slot) or in Call (for a per-key
	// token).
	Waiting
	// Queued is up-down: requests queued, or in their turn, waiting for
	// the inner service to be ready.
	Queued
	// Shed is a counter: requests turned away at once, without being
	// sent, because the service had no capacity for them.
	Shed
	// TimedOut is a counter: calls ended because they took longer than
	// their time limit.
	TimedOut
	// Retried is a counter: retries sent, not counting first attempts.
	Retried
	// Hedged is a counter: hedges sent, not counting originals.
	Hedged
	// Excluded is up-down: addresses a discovery found beyond its cap and
	// left out of the set, as of its last lookup, reported by the change
	// from one lookup to the next.
	Excluded
	// Limit is up-down: the concurrency limit a limiter that moves it
	// holds now, reported as the limit it starts with and then by each
	// change.
	Limit
	// Open is up-down: circuit breakers that are not closed now, open or
	// half-open: +1 as a breaker opens and -1 as it closes again.
	Open
	// Tripped is a counter: times a circuit breaker opened, from closed or
	// from half-open.
	Tripped
	// Ejected is up-down: endpoints a balancer's outlier detection holds
	// out of its set now.
	Ejected
	// Throttled is a counter: requests failed at once, without being
	// sent, because their sender, or their key, went over its rate.
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

// A Sink receives the measurements of one or more middleware, given to
// each with its WithMetrics option. Implementing it means keeping what
// each call says: a running sum per Kind, and the latencies by outcome,
// for a monitoring system to read. It must be safe for concurrent use,
// and cheap: it runs on the request path, on the caller's goroutine,
// never under a lock of the middleware's. A Sink should ignore a Kind it
// does not know, so that kinds can be added.
type Sink interface {
	// Add adds delta to the kind's count: +1 or -1 for an up-down kind
	// that counts requests, the change in the number for Excluded, +1 for
	// a counter, the change of the limit for Limit.
	Add(k Kind, delta int64)
	// Observe records the latency of one call, as the metrics layer
	// measured it (see [New]), and how the call ended. A Sink keeps the
	// latencies of each outcome apart, or at least those of served calls
	// apart from the others: a call shed or refused at once would pull
	// the served ones' percentiles down.
	Observe(latency time.Duration, outcome Outcome)
}
