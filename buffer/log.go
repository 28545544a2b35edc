package buffer

import (
	"log/slog"

	"github.com/towergo/tower/internal/logs"
)

// WithLogger makes the Buffer log to l the one failure it handles on its
// own: its inner service's Ready failing (or panicking), after which the
// Buffer fails every request with a *ServiceError. That is logged once, at
// level Error, with the inner service's error as "err" (and a panic's
// stack as "stack"), when the Buffer stops; the requests that then fail
// are not logged. Close is not a failure, and a Buffer that closed first
// logs nothing.
//
// The default is no logging: a library does not write to the program's
// log unasked. The log is written on the goroutine of the caller that saw
// the failure; a panic in l's handler goes on up to that caller, once the
// Buffer has stopped and given back what it held for the caller. It
// panics if l is nil.
func WithLogger(l *slog.Logger) Option {
	if l == nil {
		panic("buffer.WithLogger: nil logger")
	}
	return func(o *options) { o.logger = l }
}

// logFailed logs the failure of the inner service that stopped the
// Buffer, if it has a logger.
func (b *Buffer[Req, Res]) logFailed(cause error) {
	logs.Failure(b.log, slog.LevelError, "buffer: the inner service failed; the Buffer fails every request from now on", cause)
}
