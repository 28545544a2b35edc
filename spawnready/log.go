package spawnready

import (
	"log/slog"

	"github.com/towergo/tower/internal/option"
)

// An Option configures a SpawnReady or a Layer.
type Option func(*options)

type options struct {
	logger *slog.Logger
}

// newOptions applies opts for the function named fn.
func newOptions(fn string, opts []Option) options {
	return option.Apply[options](fn, opts)
}

// WithLogger makes the SpawnReady log to l, once, at level Error, the
// failure (or panic) of the inner service's Ready after which every Ready
// fails, with the error as "err" and a panic's stack as "stack". The Readys
// that then fail are not logged, nor is Close. The default is no logging.
// On a drive, a panic in l's handler is recovered and logged to log/slog's
// default logger; on a caller's goroutine it goes on up to that caller,
// once the SpawnReady has stopped. WithLogger panics if l is nil.
func WithLogger(l *slog.Logger) Option {
	if l == nil {
		panic("spawnready.WithLogger: nil logger")
	}
	return func(o *options) { o.logger = l }
}

// logFailed logs err, the failure of the inner service's Ready that
// stopped the SpawnReady, with write: logs.Failure or logs.SafeFailure.
func (c *core[Req, Res]) logFailed(err error, write func(*slog.Logger, slog.Level, string, error, ...slog.Attr)) {
	if c.log == nil {
		return
	}
	write(c.log, slog.LevelError, "spawnready: the inner service's Ready failed; every Ready fails from now on", err)
}
