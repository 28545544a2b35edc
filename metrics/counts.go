package metrics

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/towergo/tower/internal/stripe"
)

// Counts is a Sink that keeps, in memory, the running total of each Kind
// and the number, sum and maximum of the latencies observed: for tests,
// examples and a quick look. It allocates nothing. A program that exports
// its metrics uses a Sink of its monitoring system's, such as the
// OpenTelemetry one of module github.com/towergo/tower/towerotel.
//
// Each count is spread over cache lines, so that CPUs adding at once do not
// take turns on one line; a read while requests are under way may be off
// by those in flight, and is exact once they end.
//
// The zero Counts is ready to use. A Counts is safe for concurrent use and
// must not be copied after first use. Add ignores a Kind it does not know.
type Counts struct {
	kinds [NumKinds]stripe.Int64
	calls stripe.Int64
	sum   stripe.Int64 // nanoseconds
	max   atomic.Int64 // nanoseconds; written only by a new maximum
}

// Add adds delta to k's total.
func (c *Counts) Add(k Kind, delta int64) {
	if k > 0 && int(k) < NumKinds {
		c.kinds[k].Add(delta)
	}
}

// Observe counts a call and its latency.
func (c *Counts) Observe(latency time.Duration) {
	c.calls.Add(1)
	c.sum.Add(int64(latency))
	for m := c.max.Load(); int64(latency) > m; m = c.max.Load() {
		if c.max.CompareAndSwap(m, int64(latency)) {
			break
		}
	}
}

// Get returns k's total now, or 0 for a Kind Counts does not know.
func (c *Counts) Get(k Kind) int64 {
	if k > 0 && int(k) < NumKinds {
		return c.kinds[k].Load()
	}
	return 0
}

// Snapshot returns the totals now. Each is read atomically, but not all of
// them at the same instant: while requests run, a Snapshot may show one
// request in two states, or in none.
func (c *Counts) Snapshot() Snapshot {
	return Snapshot{
		InFlight:   c.Get(InFlight),
		Waiting:    c.Get(Waiting),
		Queued:     c.Get(Queued),
		Shed:       c.Get(Shed),
		TimedOut:   c.Get(TimedOut),
		Retried:    c.Get(Retried),
		Hedged:     c.Get(Hedged),
		Excluded:   c.Get(Excluded),
		Calls:      c.calls.Load(),
		Latency:    time.Duration(c.sum.Load()),
		MaxLatency: time.Duration(c.max.Load()),
	}
}

// A Snapshot is what a [Counts] held at one time. It is comparable, so a
// test can check all of it with ==.
type Snapshot struct {
	InFlight, Waiting, Queued       int64         // up-down: the number now
	Shed, TimedOut, Retried, Hedged int64         // counters: the total so far
	Excluded                        int64         // up-down: the number now
	Calls                           int64         // latencies observed
	Latency                         time.Duration // their sum
	MaxLatency                      time.Duration // the longest of them
}

// String returns the fields that are not zero, in the order of the struct,
// as "InFlight=1 Waiting=2 Calls=3 Latency=300ms MaxLatency=150ms", or
// "{}" if all are.
func (s Snapshot) String() string {
	var b strings.Builder
	field := func(name string, v any, zero bool) {
		if zero {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%v", name, v)
	}
	field("InFlight", s.InFlight, s.InFlight == 0)
	field("Waiting", s.Waiting, s.Waiting == 0)
	field("Queued", s.Queued, s.Queued == 0)
	field("Shed", s.Shed, s.Shed == 0)
	field("TimedOut", s.TimedOut, s.TimedOut == 0)
	field("Retried", s.Retried, s.Retried == 0)
	field("Hedged", s.Hedged, s.Hedged == 0)
	field("Excluded", s.Excluded, s.Excluded == 0)
	field("Calls", s.Calls, s.Calls == 0)
	field("Latency", s.Latency, s.Latency == 0)
	field("MaxLatency", s.MaxLatency, s.MaxLatency == 0)
	if b.Len() == 0 {
		return "{}"
	}
	return b.String()
}
