package hedge

import (
	"context"
	"fmt"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/retry"
)

// Hedge is middleware that sends a second copy of a request, a hedge, when
// the first has not answered within a latency percentile of the previous
// period.
//
// Ready is the original's and reserves nothing for a hedge. If the policy
// clones the request, the previous period has at least minDataPoints
// latencies, and the delay plus their median would not reach ctx's
// deadline, then once the delay passes unanswered a goroutine asks the
// policy's CanRetry, withdraws from the budget, waits for the inner
// service's Ready and sends the copy.
//
// The first leg to answer wins, even with an error. The loser's context is
// cancelled and Call returns only once the loser has returned. Only a
// winner that succeeded has its latency recorded, from the start of its
// own call. A panic on the caller's goroutine goes on up once a started
// hedge leg has returned; one on the hedge leg becomes that leg's answer,
// a [*tower.PanicError], or is logged if the original answered first.
//
// A hedge that is sent is reported to the request's [metrics.Tracer]:
// StartAttempt with number 2 and the delay, its Ready and Call under the
// context that returned, then EndAttempt with its error (the context's if
// the original won). A Hedge is safe for concurrent use; build one with
// [New] or [NewLayer].
type Hedge[Req, Res any] struct {
	inner     tower.Service[Req, Res]
	policy    Policy[Req]
	minPoints uint64
	histo     *rotating
	budget    retry.Budget // nil: hedges are not limited
	sink      metrics.Sink // nil: no metrics
	wraps     tower.WrapPool[Req, Res]
}

// An Option configures a Hedge.
type Option func(*options)

type options struct {
	budget    retry.Budget
	budgetSet bool
	sink      metrics.Sink
}

// WithMetrics makes the Hedge report Hedged +1 to sink for each hedge,
// once its Ready has succeeded, just before its Call. The default, and a
// nil sink, is no metrics.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) { o.sink = sink }
}

// WithBudget makes hedges draw on b, which may be shared with other Hedges
// and with retry policies (retry.WithBudget): each call deposits once, and
// each hedge sent withdraws once. Under a Retry whose policy deposits into
// b, give retry.DrawOnly(b), or the Hedge deposits for the retries too. A
// nil b means no budget; a typed nil, such as a nil *retry.TPSBudget,
// panics, as more likely a budget not yet built.
//
// The default is a budget of each Hedge's own,
// retry.NewTPSBudget(10*time.Second, 10, 1-percentile): hedges may add the
// share of requests the percentile leaves above it, plus 10 per second.
func WithBudget(b retry.Budget) Option {
	option.PanicIf(b != nil && isnil.Is(b), "hedge.WithBudget: b is a nil %T; pass nil for no budget", b)
	return func(o *options) { o.budget, o.budgetSet = b, true }
}

// New returns inner wrapped in a Hedge that follows policy. The hedge's
// delay is the percentile (a quantile in [0, 1]: 0.9 for p90) of the
// latencies recorded over the previous period, once at least minDataPoints
// were; until then no hedge is sent. The percentile is HdrHistogram's: the
// smallest latency that at least ⌈percentile·n⌉ of the n latencies do not
// exceed. Latencies are whole milliseconds, rounded up, kept exactly up to
// 2047ms and to 3 significant digits above; one beyond 4,194,303ms
// (69m54s) counts as that. Memory is bounded.
//
// New panics if inner or policy is nil (a typed nil too), percentile is
// outside [0, 1] or NaN, minDataPoints is negative, period is not
// positive, or an option is nil.
func New[Req, Res any](inner tower.Service[Req, Res], policy Policy[Req], minDataPoints int, percentile float64, period time.Duration, opts ...Option) *Hedge[Req, Res] {
	option.PanicIf(isnil.Is(inner), "hedge.New: nil inner service")
	o := newOptions("hedge.New", policy, minDataPoints, percentile, period, opts)
	h := &Hedge[Req, Res]{
		inner:     inner,
		policy:    policy,
		minPoints: uint64(minDataPoints),
		histo:     newRotating(period, percentile),
		budget:    o.budget,
		sink:      o.sink,
	}
	if !o.budgetSet {
		h.budget = retry.NewTPSBudget(10*time.Second, 10, 1-percentile)
	}
	return h
}

// NewLayer returns a Layer that wraps each service in a Hedge, as [New]
// does, each with its own histograms, and its own budget unless
// [WithBudget] shares one. It panics as New does.
func NewLayer[Req, Res any](policy Policy[Req], minDataPoints int, percentile float64, period time.Duration, opts ...Option) tower.Layer[Req, Res] {
	newOptions("hedge.NewLayer", policy, minDataPoints, percentile, period, opts) // now, not when the layer is used
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return New(inner, policy, minDataPoints, percentile, period, opts...)
	})
}

// newOptions checks the arguments of fn and applies opts.
func newOptions[Req any](fn string, policy Policy[Req], minDataPoints int, percentile float64, period time.Duration, opts []Option) options {
	if isnil.Is(policy) {
		panic(fn + ": nil policy")
	}
	if !(percentile >= 0 && percentile <= 1) { // NaN too
		panic(fmt.Sprintf("%s: percentile must be between 0 and 1, got %v", fn, percentile))
	}
	option.PanicIf(minDataPoints < 0, "%s: minDataPoints must not be negative, got %d", fn, minDataPoints)
	option.PanicIf(period <= 0, "%s: period must be positive, got %v", fn, period)
	return option.Apply[options](fn, opts)
}

// Ready waits for the inner service to be ready for the original and
// returns its permit wrapped, or its error unchanged.
func (h *Hedge[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	p, err := h.inner.Ready(ctx)
	if err != nil {
		return p, err
	}
	return h.wraps.Wrap((*wrapper[Req, Res])(h), p), nil
}

// wrapper is Hedge's tower.Wrapper, kept off Hedge's method set.
type wrapper[Req, Res any] Hedge[Req, Res]

func (w *wrapper[Req, Res]) ReleaseWrapped(inner tower.Permit[Req, Res]) { inner.Release() }

func (w *wrapper[Req, Res]) CallWrapped(ctx context.Context, inner tower.Permit[Req, Res], req Req) (Res, error) {
	h := (*Hedge[Req, Res])(w)
	defer inner.Release() // if the policy panics before the original is sent
	if h.budget != nil {
		h.budget.Deposit()
	}
	clone, ok := h.policy.Clone(req)
	start := time.Now()
	var delay, median time.Duration
	if ok {
		delay, median, ok = h.histo.delayFor(start, h.minPoints)
	}
	if d, timed := ctx.Deadline(); ok && timed && !start.Add(delay).Add(median).Before(d) {
		ok = false // a hedge sent at the delay could not answer in time
	}
	if !ok {
		res, err := inner.Call(ctx, req)
		if err == nil {
			end := time.Now()
			h.histo.record(end.Sub(start), end)
		}
		return res, err
	}
	return h.race(ctx, &inner, req, clone, start, delay)
}
