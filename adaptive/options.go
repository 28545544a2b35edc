package adaptive

import (
	"context"
	"errors"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
)

// MaxLimit is the largest bound a limit may have.
const MaxLimit = 1 << 24

// An Option configures a [Limiter].
type Option func(*options)

type options struct {
	min, max, initial int // initial 0: 20, within the bounds
	maxWaiting        int // -1: unbounded
	dropped           func(error) bool
	sink              metrics.Sink
	window            time.Duration
	minSamples        int
	reserve           int64 // per mille
	own               func() time.Duration
	toDeadline        bool
}

// WithBounds sets the least and the most the limit may be (default 1 and
// 200). It panics unless 1 <= min <= max <= MaxLimit.
func WithBounds(min, max int) Option {
	option.PanicIf(min < 1 || min > max || max > MaxLimit, "adaptive.WithBounds: want 1 <= min <= max <= %d, got min %d and max %d", MaxLimit, min, max)
	return func(o *options) { o.min, o.max = min, max }
}

// WithInitial sets the limit the limiter starts with (default 20, brought
// within the bounds). It panics unless 1 <= n <= MaxLimit; [New] panics if
// n is outside the bounds.
func WithInitial(n int) Option {
	option.PanicIf(n < 1 || n > MaxLimit, "adaptive.WithInitial: n must be between 1 and %d, got %d", MaxLimit, n)
	return func(o *options) { o.initial = n }
}

// WithMaxWaiting bounds the callers waiting in Ready for a permit, over all
// priorities, to n (default: no bound; 0: nobody waits). A caller beyond
// it gets at once a permit whose Call fails with loadshed.ErrOverloaded,
// or ctx.Err() from Ready if its ctx is already done. It panics if n < 0.
func WithMaxWaiting(n int) Option {
	option.PanicIf(n < 0, "adaptive.WithMaxWaiting: n must not be negative, got %d", n)
	return func(o *options) { o.maxWaiting = n }
}

// WithWaitToDeadline makes a caller that waits in Ready for a permit wait
// until its ctx ends, oldest first within a priority, as a semaphore's
// waiters do.
//
// By default a caller whose ctx has a deadline waits at most twice the
// dependency's typical latency (the last window's mean, less the process's
// own delay); once the queue has not emptied for that long, at most once
// that latency, newest first (CoDel's target and adaptive LIFO), so that
// fresh callers are answered in time and stale ones refused. A caller
// without a deadline is never refused, and goes when it is the oldest of
// its priority.
func WithWaitToDeadline() Option {
	return func(o *options) { o.toDeadline = true }
}

// WithDropped sets the function that tells whether a call's error is a
// drop, a sign of overload that an algorithm backs off on (default
// [Dropped]). It is called with non-nil errors, on the caller's goroutine.
// It panics if dropped is nil.
func WithDropped(dropped func(err error) bool) Option {
	option.PanicIf(dropped == nil, "adaptive.WithDropped: dropped is nil")
	return func(o *options) { o.dropped = dropped }
}

// Dropped is the default drop classifier: it reports whether err is a
// timeout (tower.IsTimeout, context.DeadlineExceeded among them), overload
// (tower.IsOverloaded) or throttling (tower.IsThrottled).
func Dropped(err error) bool {
	return tower.IsTimeout(err) || tower.IsOverloaded(err) || tower.IsThrottled(err) ||
		errors.Is(err, context.DeadlineExceeded)
}

// WithMetrics makes the limiter report to sink: Limit, the initial limit
// and then each change, so that the sum is the limit in force; InFlight,
// +1 when Ready grants a permit and -1 when it is given back; Waiting, +1
// and -1 around a caller's wait in Ready; and Shed +1 when a permit that
// sheds is called. Two changes of the limit may reach the sink in either
// order. The default, and a nil sink, is no metrics.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) { o.sink = sink }
}

// WithWindow sets how long a window lasts at least, and how many calls it
// times at least, before the algorithm moves the limit (default 1s and 10,
// as Netflix's WindowedLimit). A window ends with the first timed or
// dropped call after d, once it has timed minSamples calls or seen a drop.
// While the limit settles (after a probe, or a window that moved the limit
// or its mean latency by a quarter) windows last d/10 and need
// minSamples/2 calls (at least 1).
//
// A run of minSamples/2 timed calls whose median is above twice the last
// window's mean, or, while callers are blocked, each below three quarters
// of it, ends a window at once, so that a dependency that loses or
// regains capacity is acted on within a few calls. It panics unless d > 0
// and minSamples >= 1.
func WithWindow(d time.Duration, minSamples int) Option {
	option.PanicIf(d <= 0 || minSamples < 1, "adaptive.WithWindow: want d > 0 and minSamples >= 1, got %v and %d", d, minSamples)
	return func(o *options) { o.window, o.minSamples = d, minSamples }
}

// WithReserve sets the part of the limit kept from the lower priorities
// (default 0.1): with r = ceil(limit·fraction), a PriorityNormal request is
// admitted while fewer than limit−r are in flight and a PriorityLow one
// while fewer than limit−2r are (each at least 1); PriorityCritical may
// fill the limit. So near the limit low priority waits, or under a
// LoadShed is shed, first. With 0, priorities differ only in the order
// waiters are served. It panics unless 0 <= fraction <= 0.3.
func WithReserve(fraction float64) Option {
	checkRange("adaptive.WithReserve", "fraction", fraction, 0, 0.3)
	return func(o *options) { o.reserve = int64(fraction*1000 + 0.5) }
}

// WithOwnDelay gives the limiter a measure of the delay the process itself
// adds to a call, waiting to run or for a worker of its own (default none:
// all latency is the dependency's). At each window's end the limiter calls
// f for the mean such delay per call since its last call, and passes it as
// Sample.OwnDelay; [SchedDelay] measures the Go scheduler's part.
//
// Gradient2 and Vegas judge only the rest against the no-load latency, so
// a process that is itself the bottleneck (a proxy whose CPU is busy while
// its backends idle) is not read as the dependency's overload. It panics
// if f is nil.
func WithOwnDelay(f func() time.Duration) Option {
	option.PanicIf(f == nil, "adaptive.WithOwnDelay: f is nil")
	return func(o *options) { o.own = f }
}

func newOptions(fn string, opts []Option) options {
	o := options{min: 1, max: 200, maxWaiting: -1, dropped: Dropped, window: time.Second, minSamples: 10, reserve: 100}
	option.Onto(fn, &o, opts)
	if o.initial == 0 {
		o.initial = min(max(20, o.min), o.max)
	}
	option.PanicIf(o.initial < o.min || o.initial > o.max, "%s: initial limit %d is outside the bounds [%d, %d]", fn, o.initial, o.min, o.max)
	return o
}
