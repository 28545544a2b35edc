// Package logs writes the log lines of the middleware that take a
// *slog.Logger (WithLogger): one line per failure they handle on their
// own, with the error as "err" and, for a panic, its stack as "stack".
package logs

import (
	"context"
	"errors"
	"log/slog"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
)

// Failure logs msg to l at level, with attrs, then err as "err" and, if
// err is or wraps a *tower.PanicError, the panic's stack as "stack". It
// does nothing if l is nil. A panic in l's handler goes on up to the
// caller.
func Failure(l *slog.Logger, level slog.Level, msg string, err error, attrs ...slog.Attr) {
	if l == nil || !l.Enabled(context.Background(), level) {
		return
	}
	attrs = append(attrs, slog.Any("err", err))
	if perr, ok := errors.AsType[*tower.PanicError](err); ok {
		attrs = append(attrs, slog.String("stack", string(perr.Stack)))
	}
	l.LogAttrs(context.Background(), level, msg, attrs...)
}

// SafeFailure is Failure where a panic must not go on, such as on a
// goroutine of the middleware's own: a panic in l's handler is recovered
// and reported with guard.Orphan.
func SafeFailure(l *slog.Logger, level slog.Level, msg string, err error, attrs ...slog.Attr) {
	if l == nil {
		return
	}
	perr := guard.Call("the handler of the *slog.Logger given with WithLogger", func() { Failure(l, level, msg, err, attrs...) })
	if perr != nil {
		guard.Orphan(perr)
	}
}
