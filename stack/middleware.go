package stack

import (
	"slices"
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

// Timeout adds a Timeout of d, which fails a call not answered within d of
// its start. It is [timeout.NewLayer](d, opts...).
func (b Builder[Req, Res]) Timeout(d time.Duration, opts ...timeout.Option) Builder[Req, Res] {
	return b.with(timeout.NewLayer[Req, Res](d, opts...))
}

// ConcurrencyLimit adds a limit of max requests in flight: tower's
// ConcurrencyLimit. It is [limit.NewConcurrencyLayer](max, opts...).
func (b Builder[Req, Res]) ConcurrencyLimit(max int, opts ...limit.Option) Builder[Req, Res] {
	return b.with(limit.NewConcurrencyLayer[Req, Res](max, opts...))
}

// SharedConcurrencyLimit adds a concurrency limit shared by every service
// under sem: tower's GlobalConcurrencyLimit. It is
// [limit.NewSharedConcurrencyLayer](sem, opts...).
func (b Builder[Req, Res]) SharedConcurrencyLimit(sem *limit.Semaphore, opts ...limit.Option) Builder[Req, Res] {
	return b.with(limit.NewSharedConcurrencyLayer[Req, Res](sem, opts...))
}

// AdaptiveLimit adds a concurrency limit that moves with each call's
// latency and drops, as an algorithm newAlg makes says: under a LoadShed,
// LoadShed().AdaptiveLimit(adaptive.Gradient2()). It is
// [adaptive.NewLayer](newAlg, opts...).
func (b Builder[Req, Res]) AdaptiveLimit(newAlg func() adaptive.Algorithm, opts ...adaptive.Option) Builder[Req, Res] {
	return b.with(adaptive.NewLayer[Req, Res](newAlg, opts...))
}

// RateLimit adds a limit of num requests per period: tower's RateLimit. It
// is [limit.NewRateLayer](num, per, opts...).
func (b Builder[Req, Res]) RateLimit(num int, per time.Duration, opts ...limit.Option) Builder[Req, Res] {
	return b.with(limit.NewRateLayer[Req, Res](num, per, opts...))
}

// LoadShed adds a load shedder, which fails at once a request that the
// layers below cannot take now. It is [loadshed.NewLayer](opts...).
func (b Builder[Req, Res]) LoadShed(opts ...loadshed.Option) Builder[Req, Res] {
	return b.with(loadshed.NewLayer[Req, Res](opts...))
}

// Buffer adds a bounded queue of bound requests in front of the layers
// below: [buffer.NewLayer](bound, opts...), whose Buffers the Builder's
// Close and Shutdown close. A Buffer never closed leaks no goroutine.
func (b Builder[Req, Res]) Buffer(bound int, opts ...buffer.Option) Builder[Req, Res] {
	l := buffer.NewLayer[Req, Res](bound, opts...)
	b.buffers = append(slices.Clip(b.buffers), l)
	return b.with(l)
}

// Retry adds a Retry that retries the results retryable reports true for
// ([retry.AnyError] for every error), as the policy options say. It is
// [retry.NewLayer]([retry.NewPolicy](retryable, opts...)); for options of
// the Retry itself, use [Builder.RetryWith].
func (b Builder[Req, Res]) Retry(retryable func(res Res, err error) bool, opts ...retry.PolicyOption) Builder[Req, Res] {
	return b.RetryWith(retryable, opts)
}

// RetryWith is [Builder.Retry] with options for the Retry too. It is
// [retry.NewLayer]([retry.NewPolicy](retryable, policy...), opts...).
func (b Builder[Req, Res]) RetryWith(retryable func(res Res, err error) bool, policy []retry.PolicyOption, opts ...retry.Option) Builder[Req, Res] {
	return b.RetryPolicy(retry.NewPolicy[Req, Res](retryable, policy...), opts...)
}

// RetryPolicy adds a Retry that follows a policy of one's own, such as a
// [retry.SessionPolicy]. It is [retry.NewLayer](policy, opts...).
func (b Builder[Req, Res]) RetryPolicy(policy retry.Policy[Req, Res], opts ...retry.Option) Builder[Req, Res] {
	return b.with(retry.NewLayer(policy, opts...))
}

// Hedge adds a Hedge, which sends a request again when it is slower than
// the percentile of recent latencies. It is [hedge.NewLayer](policy,
// minDataPoints, percentile, period, opts...).
func (b Builder[Req, Res]) Hedge(policy hedge.Policy[Req], minDataPoints int, percentile float64, period time.Duration, opts ...hedge.Option) Builder[Req, Res] {
	return b.with(hedge.NewLayer[Req, Res](policy, minDataPoints, percentile, period, opts...))
}

// CircuitBreaker adds a circuit breaker, tripped by the results failure
// counts as failures. It is [breaker.NewLayer](failure, opts...).
func (b Builder[Req, Res]) CircuitBreaker(failure func(res Res, err error) bool, opts ...breaker.Option) Builder[Req, Res] {
	return b.with(breaker.NewLayer[Req, Res](failure, opts...))
}

// Throttle adds client-side adaptive throttling, which fails requests with
// [throttle.ErrThrottled] as the backend accepts fewer of them (as
// accepted judges). It is [throttle.NewLayer](accepted, opts...).
func (b Builder[Req, Res]) Throttle(accepted func(res Res, err error) bool, opts ...throttle.Option) Builder[Req, Res] {
	return b.with(throttle.NewLayer[Req, Res](accepted, opts...))
}

// Filter adds a Filter, whose pred returns the request to send or an error
// for the caller. It is [filter.NewLayer](pred).
func (b Builder[Req, Res]) Filter(pred filter.Predicate[Req]) Builder[Req, Res] {
	return b.with(filter.NewLayer[Req, Res](pred))
}

// AsyncFilter adds a Filter whose predicate gets the call's ctx. It is
// [filter.NewAsyncLayer](pred).
func (b Builder[Req, Res]) AsyncFilter(pred filter.AsyncPredicate[Req]) Builder[Req, Res] {
	return b.with(filter.NewAsyncLayer[Req, Res](pred))
}

// Metrics adds the metrics layer, which reports each call's latency and
// the requests in flight below it to sink. It is [metrics.NewLayer](sink).
func (b Builder[Req, Res]) Metrics(sink metrics.Sink) Builder[Req, Res] {
	return b.with(metrics.NewLayer[Req, Res](sink))
}
