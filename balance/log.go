package balance

import (
	"context"
	"log/slog"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/logs"
	"github.com/towergo/tower/readycache"
)

// WithLogger makes the balancer log to l what it handles on its own, each
// once, as it happens:
//
//   - an endpoint it drops because its Ready failed (or panicked): at
//     level Warn, with its key as "endpoint" and the failure as "err";
//   - an error its Discover reports (a failed lookup, say), after which it
//     carries on with the endpoints it has: Warn, with "err";
//   - a panic in its Discover's Next, after which it stops asking that
//     Discover and keeps the endpoints it has: Error, with "err" and the
//     panic's "stack";
//   - an endpoint its outlier detection ejects: Warn, with its key as
//     "endpoint", the "reason", the duration as "for", and the *[Ejection]'s
//     message as "detail".
//
// Requests are not logged: none of these reaches a caller. The handler of
// [WithErrorHandler], if any, still gets each of them, after the log. A
// balancer over a DNS Discover of package discover gets that Discover's
// reports as errors of its own: give a logger to one of the two, not both.
//
// The default is no logging: a library does not write to the program's
// log unasked. The log is written where the error handler is called: a
// panic in l's handler goes up to the caller of Ready, and on the
// balancer's goroutines it is logged to log/slog's default logger. It
// panics if l is nil.
func WithLogger(l *slog.Logger) Option {
	if l == nil {
		panic("balance.WithLogger: nil logger")
	}
	return func(o *options) { o.log = logging{l} }
}

// logging is where a balancer logs. The zero logging logs nothing.
type logging struct {
	l *slog.Logger
}

// logReport logs err, which the balancer is about to report to its error
// handler: a *readycache.Failed of an endpoint it dropped, or a
// *DiscoverError.
func logReport[K comparable](lg logging, err error) {
	if lg.l == nil {
		return
	}
	switch e := err.(type) {
	case *readycache.Failed[K]:
		logs.Failure(lg.l, slog.LevelWarn, "balance: dropped an endpoint whose Ready failed", e.Err, slog.Any("endpoint", e.Key))
	case *Ejection[K]:
		lg.l.LogAttrs(context.Background(), slog.LevelWarn, "balance: ejected an outlier endpoint",
			slog.Any("endpoint", e.Key), slog.String("reason", e.Reason.String()), slog.Duration("for", e.Duration),
			slog.String("detail", e.Error()))
	case *DiscoverError:
		if perr, ok := e.Err.(*tower.PanicError); ok && perr.Where == whereNext {
			logs.Failure(lg.l, slog.LevelError, "balance: the Discover's Next panicked; discovery stopped, the endpoints stay as they are", perr)
			return
		}
		logs.Failure(lg.l, slog.LevelWarn, "balance: the Discover reported an error; the endpoints stay as they are", e.Err)
	}
}
