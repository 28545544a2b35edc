package adaptive

import (
	"context"
	"errors"
	"fmt"
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
	min, max, initial int
	maxWaiting        int // -1: unbounded
	dropped           func(error) bool
	sink              metrics.Sink
	window            time.Duration
	minSamples        int
	reserve           int64 // per mille
	own               func() time.Duration
	toDeadline        bool
}

func defaults() options {
	return options{
		min: 1, max: 200, initial: 0, maxWaiting: -1,
		window: time.Second, minSamples: 10, reserve: 100,
	}
}

// WithBounds sets the least and the most the limit may be. It panics
// unless 1 <= min <= max <= MaxLimit. The default is 1 and 200: 200 is
// Netflix's and failsafe-go's maximum; the least is 1, not Netflix's 20,
// so that a service that can take fewer than 20 at once is protected too.
func WithBounds(min, max int) Option {
	if min < 1 || min > max || max > MaxLimit {
		panic(fmt.Sprintf("adaptive.WithBounds: want 1 <= min <= max <= %d, got min %d and max %d", MaxLimit, min, max))
	}
	return func(o *options) { o.min, o.max = min, max }
}

// WithInitial sets the limit the limiter starts with, which must be within
// its bounds (checked by New). It panics if n < 1. The default is 20
// (Netflix's and failsafe-go's), brought within the bounds.
func WithInitial(n int) Option {
	if n < 1 || n > MaxLimit {
		panic(fmt.Sprintf("adaptive.WithInitial: n must be between 1 and %d, got %d", MaxLimit, n))
	}
	return func(o *options) { o.initial = n }
}

// WithMaxWaiting bounds the callers waiting in Ready for a permit, over all
// priorities, to n. A caller that would be the n+1st does not wait: Ready
// returns at once, with a permit whose Call fails with
// loadshed.ErrOverloaded without reaching the inner service, as a
// LoadShed's does. (An error from Ready itself would say the service is
// broken for good.) A caller whose ctx is already done gets ctx.Err()
// instead, so that a LoadShed above still sees the limiter as not ready. n
// = 0 means no caller ever waits. It panics if n < 0. The default is no
// bound.
func WithMaxWaiting(n int) Option {
	if n < 0 {
		panic(fmt.Sprintf("adaptive.WithMaxWaiting: n must not be negative, got %d", n))
	}
	return func(o *options) { o.maxWaiting = n }
}

// WithWaitToDeadline makes a caller that waits in Ready for a permit wait
// until its ctx ends, oldest first within a priority, as a semaphore's
// waiters do. By default a caller whose ctx has a deadline waits at most
// twice the dependency's typical latency (the last window's mean, less
// the process's own delay), and once the queue has not emptied for that
// long (a standing queue, whose waiters come as fast as permits free up),
// at most once that latency and newest first, so that fresh callers are
// answered in time and stale ones refused: a refused caller's Call fails
// with loadshed.ErrOverloaded, as for [WithMaxWaiting]. A caller without
// a deadline is never refused: it waits until its ctx ends, and under a
// standing queue it goes when it is the oldest of its priority.
func WithWaitToDeadline() Option {
	return func(o *options) { o.toDeadline = true }
}

// WithDropped sets the function that tells whether a call's error is a
// drop: a sign of overload that an algorithm backs off on. It is called
// only with errors that are not nil, on the caller's goroutine. The
// default, [Dropped], counts timeouts, overload and throttling. It panics
// if dropped is nil.
func WithDropped(dropped func(err error) bool) Option {
	if dropped == nil {
		panic("adaptive.WithDropped: dropped is nil")
	}
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
// when the limiter is made and then each change, so that the sink's count
// is the limit in force; InFlight, +1 when Ready grants a permit and -1
// when its call returns or it is released; Waiting, +1 when a caller
// starts waiting in Ready and -1 when it stops; and Shed +1 when a permit
// refused for [WithMaxWaiting], or to a waiter past the wait bound or too
// late for its deadline, is called. A caller that finds a permit
// free never counts as Waiting. The calls are made on the caller's
// goroutine, never under the limiter's lock (a change of the limit is
// reported by the call whose end moved it, after the lock is let go, so
// two changes may reach the sink in either order; their sum is right).
// The default, and a nil sink, is no metrics.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) { o.sink = sink }
}

// WithWindow sets how long a window lasts at least, and how many calls it
// must time at least, before it ends and the algorithm moves the limit. A
// window that has lasted d ends with the first call after that which is
// timed or dropped, if it has timed minSamples calls or seen a drop;
// otherwise it goes on. While the limit settles, windows are short: d/10
// and minSamples/2 (at least 1); and a run of minSamples/2 timed calls far
// slower or faster than the last window ends one early (see the package
// doc). It panics unless d > 0 and minSamples >= 1. The default is 1s and
// 10, Netflix's WindowedLimit.
func WithWindow(d time.Duration, minSamples int) Option {
	if d <= 0 || minSamples < 1 {
		panic(fmt.Sprintf("adaptive.WithWindow: want d > 0 and minSamples >= 1, got %v and %d", d, minSamples))
	}
	return func(o *options) { o.window, o.minSamples = d, minSamples }
}

// WithReserve sets the part of the limit kept from the lower priorities:
// with r = ceil(limit·fraction), a PriorityNormal request is admitted
// while fewer than limit−r are in flight and a PriorityLow one while fewer
// than limit−2r are (each at least 1); PriorityCritical may fill the
// limit. So near the limit, low priority waits (or, under a LoadShed, is
// shed) first, and critical still gets in. fraction must be between 0 and
// 0.3; the default is 0.1. With 0, priorities differ only in the order
// waiters are served.
func WithReserve(fraction float64) Option {
	checkRange("adaptive.WithReserve", "fraction", fraction, 0, 0.3)
	return func(o *options) { o.reserve = int64(fraction*1000 + 0.5) }
}

// WithOwnDelay gives the limiter a measure of the delay the process itself
// adds to a call: the time a call spends waiting to run, or for a worker
// of the process's own, rather than in the dependency. At the end of each
// window the limiter calls f, which returns the mean such delay per call
// since the last time it was called, and hands it to the algorithm as
// Sample.OwnDelay; Gradient2 and Vegas compare only the rest of the
// latency, the dependency's own time, with the no-load latency.
//
// So a process that is itself the bottleneck (a proxy whose CPU is busy
// while its backends idle) does not read its own queueing as the
// dependency's overload: a rise in latency that OwnDelay accounts for does
// not lower the limit, and callers are not shed while the dependency has
// headroom. [SchedDelay] measures the Go scheduler's part: how long the
// process's goroutines wait to run. The default is none: every rise in
// latency is the dependency's. It panics if f is nil.
func WithOwnDelay(f func() time.Duration) Option {
	if f == nil {
		panic("adaptive.WithOwnDelay: f is nil")
	}
	return func(o *options) { o.own = f }
}

// newOptions applies opts for the function named fn and checks that they
// agree with one another.
func newOptions(fn string, opts []Option) options {
	o := defaults()
	option.Onto(fn, &o, opts)
	if o.initial == 0 {
		o.initial = min(max(20, o.min), o.max)
	}
	if o.initial < o.min || o.initial > o.max {
		panic(fmt.Sprintf("%s: initial limit %d is outside the bounds [%d, %d]", fn, o.initial, o.min, o.max))
	}
	if o.dropped == nil {
		o.dropped = Dropped
	}
	return o
}
