package discover

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
)

// DefaultMaxEndpoints is the most endpoints a DNS Discover keeps in its
// set, unless [WithMaxEndpoints] says otherwise: enough for any pool a
// name usually fronts, and a bound on the endpoints (and the goroutines
// that drive them) that a resolver answering thousands of addresses makes.
const DefaultMaxEndpoints = 1024

// A DNSOption configures a DNS Discover.
type DNSOption func(*dnsOptions)

type dnsOptions struct {
	max    int
	sink   metrics.Sink
	logger *slog.Logger
}

// WithMaxEndpoints makes a DNS Discover keep at most n endpoints; the
// default is [DefaultMaxEndpoints]. When a lookup finds more distinct
// addresses than n, the set keeps first those of its addresses that are in
// it already, so that it does not churn, and fills the rest with the new
// ones in sorted order; the others are left out, until a lookup finds room
// for them. Next reports such a lookup with a *[TruncatedError], and the
// number left out goes to the sink of [WithMetrics]. It panics if n is
// less than 1.
func WithMaxEndpoints(n int) DNSOption {
	if n < 1 {
		panic(fmt.Sprintf("discover.WithMaxEndpoints: n must be at least 1, got %d", n))
	}
	return func(o *dnsOptions) { o.max = n }
}

// WithMetrics makes a DNS Discover report to sink the addresses its last
// lookup found beyond its cap and left out of the set, as
// [metrics.Excluded]: the sink's count of that kind goes up and down with
// each lookup that succeeds, and reads the number left out by the last one.
// A failed lookup changes nothing. It panics if sink is nil.
func WithMetrics(sink metrics.Sink) DNSOption {
	if isnil.Is(sink) {
		panic("discover.WithMetrics: nil sink")
	}
	return func(o *dnsOptions) { o.sink = sink }
}

func newDNSOptions(fn string, opts []DNSOption) dnsOptions {
	o := dnsOptions{max: DefaultMaxEndpoints}
	option.Onto(fn, &o, opts)
	return o
}

// capped returns the addresses of found, sorted and distinct, that the set
// is to hold: all of them, or, if there are more than d.max, those in the
// set already and then new ones in order, d.max in all, sorted. It reports
// the number left out to the sink, and a TruncatedError if there are any.
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
	for _, a := range found {
		if d.current[a] && len(kept) < d.max {
			kept = append(kept, a)
		}
	}
	for _, a := range found {
		if !d.current[a] && len(kept) < d.max {
			kept = append(kept, a)
		}
	}
	slices.Sort(kept)
	return kept, &TruncatedError{Name: d.name, Found: len(found), Max: d.max}
}
