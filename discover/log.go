package discover

import (
	"log/slog"

	"github.com/towergo/tower/internal/logs"
)

// WithLogger makes a DNS Discover log to l, at level Warn, each report it
// returns from Next: a *[LookupError] with "name", a *[ServiceError] with
// "addr", a *[TruncatedError] with "name", "found" and "max"; each with its
// error as "err", and a panic's stack as "stack". A balancer over the DNS
// logs the same reports if it has a logger: give one to the DNS or to the
// balancer, not both. The default is no logging. A panic in l's handler is
// logged to log/slog's default logger. WithLogger panics if l is nil.
func WithLogger(l *slog.Logger) DNSOption {
	if l == nil {
		panic("discover.WithLogger: nil logger")
	}
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
