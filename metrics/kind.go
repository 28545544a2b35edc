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
	// A ConcurrencyLimit and the metrics layer report it.
	InFlight Kind = iota + 1
	// Waiting is up-down: callers waiting in Ready for capacity, a
	// ConcurrencyLimit's permit, a RateLimit's window, a token bucket's
	// token or a Buffer's slot, and calls of a per-key limit waiting for
	// their key's token.
	Waiting
	// Queued is up-down: requests queued in a Buffer, or in their turn,
	// waiting for the inner service to be ready.
	Queued
	// Shed is a counter: requests a LoadShed turned away with
	// ErrOverloaded.
	Shed
	// TimedOut is a counter: calls a Timeout ended with its ErrElapsed.
	TimedOut
	// Retried is a counter: retries a Retry sent, not counting first
	// attempts.
	Retried
	// Hedged is a counter: hedges a Hedge sent, not counting originals.
	Hedged
	// Excluded is up-down: addresses a discovery found beyond its cap and
	// left out of the set, as of its last lookup. A DNS Discover of
	// package discover reports it, by the change from one lookup to the
	// next.
	Excluded
	// Limit is up-down: the concurrency limit an adaptive limiter holds
	// now. Package adaptive reports it, as the limit it starts with and
	// then by each change.
	Limit
	// Open is up-down: circuit breakers that are not closed now, open or
	// half-open. Package breaker reports it, +1 as a breaker opens and -1
	// as it closes again.
	Open
	// Tripped is a counter: times a circuit breaker opened, from closed or
	// from half-open.
	Tripped
	// Ejected is up-down: endpoints a balancer's outlier detection holds
	// out of its set now.
	Ejected
	// Throttled is a counter: requests a client-side adaptive throttle
	// or a per-key rate limit failed at once, without sending them.
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

// A Sink receives the measurements of one or more middleware. It must be
// safe for concurrent use, and cheap: it runs on the request path, on the
// caller's goroutine, never under a lock of the middleware's. A Sink
// should ignore a Kind it does not know, so that kinds can be added.
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
