package limit

import (
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
)

// An Option configures a [Concurrency], a [Rate] or a [Bucket]; a [Keyed]
// takes a [KeyedOption].
type Option func(*options)

type options struct {
	sink metrics.Sink
}

// WithMetrics makes the limit report to sink. A [Concurrency] reports
// InFlight, +1 when Ready takes a permit and -1 when it is given back (the
// call returned, the permit was released unused, or the inner Ready
// failed). All three report Waiting, +1 when a caller queues for a permit,
// window place or token and -1 when it stops, granted or not; a caller
// that does not queue never counts. The default, and a nil sink, is no
// metrics.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) { o.sink = sink }
}

// newOptions applies opts for the function named fn.
func newOptions(fn string, opts []Option) options {
	return option.Apply[options](fn, opts)
}
