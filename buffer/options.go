package buffer

import (
	"log/slog"

	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
)

// An Option configures a [Buffer] or a [Layer].
type Option func(*options)

type options struct {
	sink   metrics.Sink
	logger *slog.Logger // nil: no logging
}

// WithMetrics makes the Buffer report to sink. Queued: +1 when a request
// is queued, -1 when it leaves the queue, however it leaves; a request
// that skips the queue (nothing ahead, and the inner service ready) is not
// counted. Waiting: +1 when a caller starts waiting in Ready for a slot,
// -1 when it stops, with a slot or not; a caller that finds a slot free is
// not counted. The default, and a nil sink, is no metrics.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) { o.sink = sink }
}

// WithLogger makes the Buffer log to l the one failure it handles on its
// own: its inner service's Ready failing or panicking (see
// [ServiceError]). It is logged once, at level Error, with the error as
// "err" (and a panic's stack as "stack"), on the goroutine of the caller
// that saw it; a panic in l's handler goes on up to that caller. Close is
// not a failure. The default is no logging. It panics if l is nil.
func WithLogger(l *slog.Logger) Option {
	option.PanicIf(l == nil, "buffer.WithLogger: nil logger")
	return func(o *options) { o.logger = l }
}

// newOptions applies opts for the function named fn.
func newOptions(fn string, opts []Option) options {
	return option.Apply[options](fn, opts)
}
