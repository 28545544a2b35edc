package discover

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/metrics"
)

// DefaultMaxEndpoints is the most endpoints a DNS Discover keeps, unless
// [WithMaxEndpoints] says otherwise: enough for the pool a name usually
// fronts, and a bound on the endpoints a resolver answering thousands of
// addresses would make.
const DefaultMaxEndpoints = 1024

// A DNSOption configures a DNS Discover.
type DNSOption func(*dnsOptions)

type dnsOptions struct {
	max    int          // the most endpoints in the set
	sink   metrics.Sink // nil: no metrics
	logger *slog.Logger // nil: no logging
}

// WithMaxEndpoints makes a DNS Discover keep at most n endpoints; the
// default is [DefaultMaxEndpoints]. When a lookup finds more distinct
// addresses than n, the set keeps those it has first, so it does not
// churn, and fills the rest with new ones in sorted order; the others wait
// for a lookup that finds room. Next reports such a lookup with a
// *[TruncatedError], and the number left out goes to [WithMetrics]. It
// panics if n is less than 1.
func WithMaxEndpoints(n int) DNSOption {
	if n < 1 {
		panic(fmt.Sprintf("discover.WithMaxEndpoints: n must be at least 1, got %d", n))
	}
	return func(o *dnsOptions) { o.max = n }
}

// WithMetrics makes a DNS Discover report to sink, as [metrics.Excluded],
// the addresses its last successful lookup left out of the set for the
// cap: the count goes up and down with each such lookup. It panics if
// sink is nil.
func WithMetrics(sink metrics.Sink) DNSOption {
	if isnil.Is(sink) {
		panic("discover.WithMetrics: nil sink")
	}
	return func(o *dnsOptions) { o.sink = sink }
}

// capped returns the addresses of found (sorted and distinct) that the set
// is to hold, sorted, and a TruncatedError if some are left out.
func (d *DNS[S]) capped(found []string) ([]string, *TruncatedError) {
	excluded := max(len(found)-d.max, 0)
	if d.sink != nil && excluded != d.excluded {
		d.sink.Add(metrics.Excluded, int64(excluded-d.excluded))
	}
	d.excluded = excluded
	if excluded == 0 {
		return found, nil
	}
	kept := make([]string, 0, d.max)
	for _, had := range []bool{true, false} { // those the set has first
		for _, a := range found {
			if d.current[a] == had && len(kept) < d.max {
				kept = append(kept, a)
			}
		}
	}
	slices.Sort(kept)
	return kept, &TruncatedError{Name: d.name, Found: len(found), Max: d.max}
}
