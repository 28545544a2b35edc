package stack

import (
	"time"

	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/breaker"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/filter"
	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/throttle"
	"github.com/towergo/tower/timeout"
)

// Each method below adds one layer made by its package's constructor with
// the same arguments, and panics where that constructor does, with its
// message, which names the parameter.

// Timeout adds a Timeout of d: a call not answered within d of its start
// fails with [timeout.ErrElapsed]. Ready is not timed, so above a limit
// the wait for its permit does not count. It is [timeout.NewLayer](d,
// opts...).
func (b Builder[Req, Res]) Timeout(d time.Duration, opts ...timeout.Option) Builder[Req, Res] {
	return b.with(timeout.NewLayer[Req, Res](d, opts...))
}

// ConcurrencyLimit adds a limit of max requests in flight, waiting in
// Ready, first come first served, while all are taken: tower's
// ConcurrencyLimit. Each service the builder wraps gets a limit of its
// own. It is [limit.NewConcurrencyLayer](max, opts...).
func (b Builder[Req, Res]) ConcurrencyLimit(max int, opts ...limit.Option) Builder[Req, Res] {
	return b.with(limit.NewConcurrencyLayer[Req, Res](max, opts...))
}

// SharedConcurrencyLimit adds a concurrency limit whose permits come from
// sem, so that every service under sem, in this stack or another, counts
// against one limit: tower's GlobalConcurrencyLimit. It is
// [limit.NewSharedConcurrencyLayer](sem, opts...).
func (b Builder[Req, Res]) SharedConcurrencyLimit(sem *limit.Semaphore, opts ...limit.Option) Builder[Req, Res] {
	return b.with(limit.NewSharedConcurrencyLayer[Req, Res](sem, opts...))
}

// AdaptiveLimit adds a concurrency limit that moves as the algorithm newAlg
// makes sees each call's latency and drops: Ready waits for a permit under
// it, higher priorities first. Each service the builder wraps gets a limit
// and an algorithm of its own. Under a LoadShed it protects a server with
// no number to choose: LoadShed().AdaptiveLimit(adaptive.Gradient2()). It
// is [adaptive.NewLayer](newAlg, opts...).
func (b Builder[Req, Res]) AdaptiveLimit(newAlg func() adaptive.Algorithm, opts ...adaptive.Option) Builder[Req, Res] {
	return b.with(adaptive.NewLayer[Req, Res](newAlg, opts...))
}

// RateLimit adds a limit of num requests per period, in tower's fixed
// windows: tower's RateLimit. Each service the builder wraps gets windows
// of its own. It is [limit.NewRateLayer](num, per, opts...).
func (b Builder[Req, Res]) RateLimit(num int, per time.Duration, opts ...limit.Option) Builder[Req, Res] {
	return b.with(limit.NewRateLayer[Req, Res](num, per, opts...))
}

// LoadShed adds a load shedder: Ready never waits, and a request that the
// layers below cannot take now fails at once with
// [loadshed.ErrOverloaded]. Put it above what should shed rather than
// wait, typically a ConcurrencyLimit. It is [loadshed.NewLayer](opts...).
func (b Builder[Req, Res]) LoadShed(opts ...loadshed.Option) Builder[Req, Res] {
	return b.with(loadshed.NewLayer[Req, Res](opts...))
}

// Buffer adds a bounded queue of bound requests in front of the layers
// below: Ready reserves a slot, and Call waits in the queue for its turn
// at the inner service's readiness. It is [buffer.NewLayer](bound,
// opts...). The Builder's Close and Shutdown close every Buffer this layer
// makes; a Buffer never closed leaks no goroutine, and is kept by the
// layer until the Builder is closed or dropped.
func (b Builder[Req, Res]) Buffer(bound int, opts ...buffer.Option) Builder[Req, Res] {
	return b.own(buffer.NewLayer[Req, Res](bound, opts...))
}

// Retry adds a Retry whose policy is a [retry.StandardPolicy] that
// retries the results retryable reports true for ([retry.AnyError] for
// every error), as policy options say: an attempt limit, a backoff, a
// budget. It is [retry.NewLayer]([retry.NewPolicy](retryable, opts...)),
// and panics if retryable is nil. For options of the Retry itself
// ([retry.WithMetrics]), use [Builder.RetryWith].
func (b Builder[Req, Res]) Retry(retryable func(res Res, err error) bool, opts ...retry.PolicyOption) Builder[Req, Res] {
	return b.RetryWith(retryable, opts)
}

// RetryWith is [Builder.Retry] with options for the Retry too: the
// policy's options come as a slice, so that the Retry's can follow. It is
// [retry.NewLayer]([retry.NewPolicy](retryable, policy...), opts...).
func (b Builder[Req, Res]) RetryWith(retryable func(res Res, err error) bool, policy []retry.PolicyOption, opts ...retry.Option) Builder[Req, Res] {
	return b.RetryPolicy(retry.NewPolicy[Req, Res](retryable, policy...), opts...)
}

// RetryPolicy adds a Retry that follows a policy of one's own: one that
// can clone a request that is not a value, or that keeps state per
// request (a [retry.SessionPolicy]). It is [retry.NewLayer](policy,
// opts...).
func (b Builder[Req, Res]) RetryPolicy(policy retry.Policy[Req, Res], opts ...retry.Option) Builder[Req, Res] {
	return b.with(retry.NewLayer(policy, opts...))
}

// Hedge adds a Hedge: a request the policy clones that has not been
// answered within the percentile of the previous period's latencies, once
// that period recorded minDataPoints of them, is sent a second time, and
// the first answer wins. It is [hedge.NewLayer](policy, minDataPoints,
// percentile, period, opts...).
func (b Builder[Req, Res]) Hedge(policy hedge.Policy[Req], minDataPoints int, percentile float64, period time.Duration, opts ...hedge.Option) Builder[Req, Res] {
	return b.with(hedge.NewLayer[Req, Res](policy, minDataPoints, percentile, period, opts...))
}

// CircuitBreaker adds a circuit breaker: once the results failure counts
// as failures trip it, its Ready waits until a probe may go, so that a
// balancer above passes its endpoint over and a LoadShed above sheds at
// once. It is [breaker.NewLayer](failure, opts...).
func (b Builder[Req, Res]) CircuitBreaker(failure func(res Res, err error) bool, opts ...breaker.Option) Builder[Req, Res] {
	return b.with(breaker.NewLayer[Req, Res](failure, opts...))
}

// Throttle adds client-side adaptive throttling: a request fails at once
// with [throttle.ErrThrottled], with a probability that grows as the
// backend accepts (as accepted says) less than a share of what is sent. It
// is [throttle.NewLayer](accepted, opts...).
func (b Builder[Req, Res]) Throttle(accepted func(res Res, err error) bool, opts ...throttle.Option) Builder[Req, Res] {
	return b.with(throttle.NewLayer[Req, Res](accepted, opts...))
}

// Filter adds a Filter: pred sees each request in Call, and returns either
// the request to send or an error that the caller gets instead. It is
// [filter.NewLayer](pred).
func (b Builder[Req, Res]) Filter(pred filter.Predicate[Req]) Builder[Req, Res] {
	return b.with(filter.NewLayer[Req, Res](pred))
}

// AsyncFilter adds a Filter whose predicate gets the call's ctx, and may
// take time or ask another service, under the request's deadline. It is
// [filter.NewAsyncLayer](pred).
func (b Builder[Req, Res]) AsyncFilter(pred filter.AsyncPredicate[Req]) Builder[Req, Res] {
	return b.with(filter.NewAsyncLayer[Req, Res](pred))
}

// Metrics adds the metrics layer: it reports the latency of each call
// and the requests in flight below it to sink. Where it sits decides what
// the latency includes, as for a Timeout. It is [metrics.NewLayer](sink).
func (b Builder[Req, Res]) Metrics(sink metrics.Sink) Builder[Req, Res] {
	return b.with(metrics.NewLayer[Req, Res](sink))
}
