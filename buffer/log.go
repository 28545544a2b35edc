package buffer

import (
	"log/slog"

	"github.com/towergo/tower/internal/logs"
)

// WithLogger makes the Buffer log to l the one failure it handles on its
// own: its inner service's Ready failing or panicking, after which every
// request fails with a *ServiceError. It is logged once, at level Error,
// with the error as "err" (and a panic's stack as "stack"), on the
// goroutine of the caller that saw it, once the Buffer has stopped and
// given back what it held for that caller; a panic in l's handler goes on
// up to that caller. Close is not a failure: a Buffer closed first logs
// nothing. The default is no logging. It panics if l is nil.
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
