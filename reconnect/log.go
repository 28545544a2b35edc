package reconnect

import (
	"log/slog"

	"github.com/towergo/tower/internal/logs"
	"github.com/towergo/tower/internal/option"
)

// An Option configures a Reconnect.
type Option func(*options)

type options struct{ logger *slog.Logger }

// WithLogger makes the Reconnect log to l, with the target as "target",
// the failure as "err" and a panic's stack as "stack":
//
//   - a failed connect: Warn, with "attempt", the number of connects in a
//     row that have failed, this one included;
//   - the current service failing its readiness: Warn, with the error of
//     its Close, if any, as "close_err";
//   - the maker's own Ready failing, which breaks the Reconnect: Error.
//
// The default is no logging. A connect's failure is logged on the connect
// goroutine before the waiting callers are told, and a panic in l's
// handler there is logged to log/slog's default logger. A service's
// failure is logged on the goroutine of the caller whose Ready saw it, and
// a panic in l's handler goes up to that caller. WithLogger panics if l is
// nil.
func WithLogger(l *slog.Logger) Option {
	option.PanicIf(l == nil, "reconnect.WithLogger: nil logger")
	return func(o *options) { o.logger = l }
}

// logConnect logs the failure of the connect a: the maker's Ready's if broken.
func (c *core[Target, Req, Res]) logConnect(a *attempt[Req, Res], err error, broken bool) {
	if c.log == nil {
		return
	}
	if broken {
		logs.SafeFailure(c.log, slog.LevelError, "reconnect: the maker's Ready failed; the Reconnect is broken for good", err,
			slog.Any("target", c.target))
		return
	}
	logs.SafeFailure(c.log, slog.LevelWarn, "reconnect: connect failed; the next Ready connects again", err,
		slog.Any("target", c.target), slog.Int("attempt", a.failed))
}

// logDropped logs the current service's readiness failure, and its Close's.
func (c *core[Target, Req, Res]) logDropped(err, closeErr error) {
	if c.log == nil {
		return
	}
	attrs := []slog.Attr{slog.Any("target", c.target)}
	if closeErr != nil {
		attrs = append(attrs, slog.Any("close_err", closeErr))
	}
	logs.Failure(c.log, slog.LevelWarn, "reconnect: the service failed its readiness; dropped it to connect again", err, attrs...)
}
