package metrics

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/towergo/tower/internal/stripe"
)

// Counts is a Sink and a RequestSink that keeps in memory the running
// total of each Kind, the number of calls observed with each Outcome, and
// the sum and maximum of the served ones' latencies. It allocates nothing,
// and CPUs adding at once do not contend; a read while requests are under
// way may be off by those in flight, and is exact once they end.
//
// The zero Counts is ready to use. A Counts is safe for concurrent use and
// must not be copied after first use. It ignores a Kind or an Outcome it
// does not know.
type Counts struct {
	kinds    [NumKinds]stripe.Int64
	outcomes [NumOutcomes]stripe.Int64 // calls observed
	sum      stripe.Int64              // of served calls' latencies, in nanoseconds
	max      atomic.Int64              // the longest served call's, in nanoseconds; written only by a new maximum
}

// Add adds delta to k's total.
func (c *Counts) Add(k Kind, delta int64) {
	if k > 0 && int(k) < NumKinds {
		c.kinds[k].Add(delta)
	}
}

// Observe counts a call with its outcome, and the latency of a served one;
// other latencies measure how fast a call is turned away, not served.
func (c *Counts) Observe(latency time.Duration, outcome Outcome) {
	if outcome == 0 || int(outcome) >= NumOutcomes {
		return
	}
	c.outcomes[outcome].Add(1)
	if outcome != OutcomeServed {
		return
	}
	c.sum.Add(int64(latency))
	for m := c.max.Load(); int64(latency) > m; m = c.max.Load() {
		if c.max.CompareAndSwap(m, int64(latency)) {
			break
		}
	}
}

// ObserveRequest counts r's outcome and latency as Observe does.
func (c *Counts) ObserveRequest(r Request) { c.Observe(r.Latency, r.Outcome) }

// Get returns k's total now, or 0 for a Kind Counts does not know.
func (c *Counts) Get(k Kind) int64 {
	if k > 0 && int(k) < NumKinds {
		return c.kinds[k].Load()
	}
	return 0
}

// Snapshot returns the totals now, each read atomically but not all at
// one instant: while requests run, it may show one request in two states,
// or in none.
func (c *Counts) Snapshot() Snapshot {
	s := Snapshot{Latency: time.Duration(c.sum.Load()), MaxLatency: time.Duration(c.max.Load())}
	for k, n := range s.kinds() {
		if n != nil {
			*n = c.Get(Kind(k))
		}
	}
	for o := range s.Calls {
		s.Calls[o] = c.outcomes[o].Load()
	}
	return s
}

// A Snapshot is what a [Counts] held at one time. It is comparable, so a
// test can check all of it with ==.
type Snapshot struct {
	InFlight, Waiting, Queued       int64              // up-down: the number now
	Shed, TimedOut, Retried, Hedged int64              // counters: the total so far
	Excluded                        int64              // up-down: the number now
	Limit                           int64              // up-down: the limit now
	Open                            int64              // up-down: breakers open or half-open now
	Tripped                         int64              // counter: times a breaker opened
	Ejected                         int64              // up-down: endpoints ejected now
	Throttled                       int64              // counter: requests a throttle failed
	Calls                           [NumOutcomes]int64 // calls observed, by Outcome: Calls[OutcomeShed]
	Latency                         time.Duration      // the sum of the served calls' latencies
	MaxLatency                      time.Duration      // the longest of them
}

// kinds returns pointers to s's count of each Kind, indexed by Kind.
func (s *Snapshot) kinds() [NumKinds]*int64 {
	return [NumKinds]*int64{InFlight: &s.InFlight, Waiting: &s.Waiting, Queued: &s.Queued,
		Shed: &s.Shed, TimedOut: &s.TimedOut, Retried: &s.Retried, Hedged: &s.Hedged,
		Excluded: &s.Excluded, Limit: &s.Limit, Open: &s.Open, Tripped: &s.Tripped,
		Ejected: &s.Ejected, Throttled: &s.Throttled}
}

// Served returns the number of served calls observed.
func (s Snapshot) Served() int64 { return s.Calls[OutcomeServed] }

// String returns the fields that are not zero, in the order of the
// struct, as "InFlight=1 Calls[served]=3 Calls[shed]=1 Latency=300ms
// MaxLatency=150ms", or "{}" if all are.
func (s Snapshot) String() string {
	var fields []string
	field := func(name string, v any, zero bool) {
		if !zero {
			fields = append(fields, fmt.Sprintf("%s=%v", name, v))
		}
	}
	for k, n := range s.kinds() {
		if n != nil {
			field(Kind(k).String(), *n, *n == 0)
		}
	}
	for o, n := range s.Calls {
		field("Calls["+Outcome(o).String()+"]", n, n == 0)
	}
	field("Latency", s.Latency, s.Latency == 0)
	field("MaxLatency", s.MaxLatency, s.MaxLatency == 0)
	if fields == nil {
		return "{}"
	}
	return strings.Join(fields, " ")
}
