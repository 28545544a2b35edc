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
// InFlight, +1 when Ready takes a permit and -1 when the call returns or
// the permit is given back unused (or given back because the inner
// service's Ready failed), and Waiting, +1 when a caller starts waiting in
// line for a permit and -1 when it stops, granted or not. A [Rate] reports
// Waiting, for callers waiting in line for a window, and a [Bucket]
// Waiting, for callers waiting in line for a token: +1 when one queues, -1
// when it is granted a token or its ctx ends. A caller that finds capacity
// free, or asks with a done ctx and finds none, never counts as Waiting.
//
// The default, and a nil sink, is no metrics: then the only cost is a nil
// check on the request path.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) { o.sink = sink }
}

// newOptions applies opts for the function named fn.
func newOptions(fn string, opts []Option) options {
	return option.Apply[options](fn, opts)
}
