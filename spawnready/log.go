package spawnready

import (
	"log/slog"

	"github.com/towergo/tower/internal/option"
)

// An Option configures a SpawnReady or a Layer.
type Option func(*options)

type options struct{ logger *slog.Logger }

// WithLogger makes the SpawnReady log to l, once, at level Error, the
// failure (or panic) of the inner service's Ready after which every Ready
// fails, with the error as "err" and a panic's stack as "stack". The
// default is no logging. On a drive, a panic in l's handler is logged to
// log/slog's default logger; on a caller's goroutine it goes on up to that
// caller. WithLogger panics if l is nil.
func WithLogger(l *slog.Logger) Option {
	option.PanicIf(l == nil, "spawnready.WithLogger: nil logger")
	return func(o *options) { o.logger = l }
}
