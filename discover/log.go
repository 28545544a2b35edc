package discover

import (
	"log/slog"

	"github.com/towergo/tower/internal/logs"
)

// WithLogger makes a DNS Discover log to l each report it returns from
// Next, once, at level Warn: a failed lookup, or one with no address (a
// *[LookupError], with the name as "name"); a failed service (a
// *[ServiceError], with the address as "addr"); a lookup that found more
// addresses than the cap (a *[TruncatedError], with "name", "found" and
// "max"). Each has its error as "err", and a panic's stack as "stack".
// These are what the DNS handles on its own: the set stays as the last
// good lookup left it.
//
// The default is no logging: a library does not write to the program's
// log unasked. A balancer over the DNS (package balance) gets the same
// reports from Next, and logs them itself if it has a logger: give one to
// the DNS or to the balancer, not both. The log is written in Next, on its
// caller's goroutine. A panic in l's handler is recovered and logged to
// log/slog's default logger, so that a bug there does not stop the
// discovery, as a panic in the Resolver does not. WithLogger panics if l
// is nil.
func WithLogger(l *slog.Logger) DNSOption {
	if l == nil {
		panic("discover.WithLogger: nil logger")
	}
	return func(o *dnsOptions) { o.logger = l }
}

// logged logs err, a report Next is about to return, if d has a logger,
// and returns err. It leaves the context's errors alone: they are not
// reports.
func (d *DNS[S]) logged(err error) error {
	if d.log == nil {
		return err
	}
	switch e := err.(type) {
	case *LookupError:
		logs.SafeFailure(d.log, slog.LevelWarn, "discover: DNS lookup failed; the endpoints stay as they are", e.Err,
			slog.String("name", e.Name))
	case *ServiceError:
		logs.SafeFailure(d.log, slog.LevelWarn, "discover: making the service for a new address failed; it is tried again at the next lookup", e.Err,
			slog.String("addr", e.Addr))
	case *TruncatedError:
		logs.SafeFailure(d.log, slog.LevelWarn, "discover: DNS lookup found more addresses than the cap; some are left out", err,
			slog.String("name", e.Name), slog.Int("found", e.Found), slog.Int("max", e.Max))
	}
	return err
}
