package discover

import (
	"log/slog"
	"slices"

	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/logs"
	"github.com/towergo/tower/internal/option"
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
	option.PanicIf(n < 1, "discover.WithMaxEndpoints: n must be at least 1, got %d", n)
	return func(o *dnsOptions) { o.max = n }
}

// WithMetrics makes a DNS Discover report to sink, as [metrics.Excluded],
// the addresses its last successful lookup left out of the set for the
// cap: the count goes up and down with each such lookup. It panics if
// sink is nil.
func WithMetrics(sink metrics.Sink) DNSOption {
	option.PanicIf(isnil.Is(sink), "discover.WithMetrics: nil sink")
	return func(o *dnsOptions) { o.sink = sink }
}

// capped returns the addresses of found (sorted and distinct) that the set
// is to hold, sorted, and queues a TruncatedError if some are left out.
func (d *DNS[S]) capped(found []string) []string {
	excluded := max(len(found)-d.max, 0)
	if d.sink != nil && excluded != d.excluded {
		d.sink.Add(metrics.Excluded, int64(excluded-d.excluded))
	}
	d.excluded = excluded
	if excluded == 0 {
		return found
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
	d.queue = append(d.queue, dnsItem[S]{err: &TruncatedError{Name: d.name, Found: len(found), Max: d.max}})
	return kept
}

// WithLogger makes a DNS Discover log to l, at level Warn, each report it
// returns from Next: a *[LookupError] with "name", a *[ServiceError] with
// "addr", a *[TruncatedError] with "name", "found" and "max"; each with its
// error as "err", and a panic's stack as "stack". A balancer over the DNS
// logs the same reports if it has a logger: give one to the DNS or to the
// balancer, not both. The default is no logging. A panic in l's handler is
// logged to log/slog's default logger. WithLogger panics if l is nil.
func WithLogger(l *slog.Logger) DNSOption {
	option.PanicIf(l == nil, "discover.WithLogger: nil logger")
	return func(o *dnsOptions) { o.logger = l }
}

// logged logs err, a report (or nil) Next is about to return, if d has a
// logger, and returns err.
func (d *DNS[S]) logged(err error) error {
	if d.logger == nil {
		return err
	}
	switch e := err.(type) {
	case *LookupError:
		logs.SafeFailure(d.logger, slog.LevelWarn, "discover: DNS lookup failed; the endpoints stay as they are", e.Err,
			slog.String("name", e.Name))
	case *ServiceError:
		logs.SafeFailure(d.logger, slog.LevelWarn, "discover: making the service for a new address failed; it is tried again at the next lookup", e.Err,
			slog.String("addr", e.Addr))
	case *TruncatedError:
		logs.SafeFailure(d.logger, slog.LevelWarn, "discover: DNS lookup found more addresses than the cap; some are left out", err,
			slog.String("name", e.Name), slog.Int("found", e.Found), slog.Int("max", e.Max))
	}
	return err
}
