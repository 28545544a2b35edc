package balance

import (
	"context"
	"log/slog"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/logs"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/readycache"
)

// WithLogger makes the balancer log to l what it hands the error handler,
// before the handler gets it:
//
//   - an endpoint dropped because its Ready failed or panicked: Warn, with
//     its key as "endpoint" and the failure as "err";
//   - an error of its Discover: Warn, with "err";
//   - a panic in its Discover's Next: Error, with "err" and "stack";
//   - an endpoint ejected by outlier detection: Warn, with "endpoint",
//     "reason", the duration as "for", and the *[Ejection]'s message as
//     "detail".
//
// A balancer over a DNS Discover (package discover) gets its reports as
// errors: give a logger to one of the two, not both. The default is no
// logging. It panics if l is nil.
func WithLogger(l *slog.Logger) Option {
	option.PanicIf(l == nil, "balance.WithLogger: nil logger")
	return func(o *options) { o.log = l }
}

func logReport[K comparable](l *slog.Logger, err error) {
	if l == nil {
		return
	}
	switch e := err.(type) {
	case *readycache.Failed[K]:
		logs.Failure(l, slog.LevelWarn, "balance: dropped an endpoint whose Ready failed", e.Err, slog.Any("endpoint", e.Key))
	case *Ejection[K]:
		l.LogAttrs(context.Background(), slog.LevelWarn, "balance: ejected an outlier endpoint",
			slog.Any("endpoint", e.Key), slog.String("reason", e.Reason.String()), slog.Duration("for", e.Duration),
			slog.String("detail", e.Error()))
	case *DiscoverError:
		if perr, ok := e.Err.(*tower.PanicError); ok && perr.Where == whereNext {
			logs.Failure(l, slog.LevelError, "balance: the Discover's Next panicked; discovery stopped, the endpoints stay as they are", perr)
			return
		}
		logs.Failure(l, slog.LevelWarn, "balance: the Discover reported an error; the endpoints stay as they are", e.Err)
	}
}
