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
// period: tower's Hedge. Whichever copy answers first answers the call,
// with a response or an error; the other is cancelled.
//
// Ready is the original's readiness: it passes through to the inner
// service and wraps its permit, and reserves nothing for a hedge. Call
// sends the original on that permit, and fixes the hedge's delay at that
// instant, from the previous period's latencies. If the request is cloned
// by the policy, and the previous period recorded at least minDataPoints
// latencies, then once the delay has passed without an answer, the hedge
// leg asks the policy's CanRetry, withdraws from the budget, waits for the
// inner service to be ready, and sends the copy. Only then does it hold a
// reservation; a Hedge over a Buffer does not keep a queue slot for a
// hedge that may never be sent (tower PR #472).
//
// The first leg to answer wins, even with an error. The loser's context is
// cancelled and Call returns once it has returned too: whatever the loser
// held (a permit, a queue slot) is given back before the caller hears, and
// nothing the call started outlives it. An original that ignores
// cancellation therefore keeps the caller waiting even after the hedge
// answered. The original runs on the caller's goroutine; the hedge on a
// goroutine of its own, started only when the delay passes.
//
// A panic in the user code that runs on the caller's goroutine (the
// policy's Clone, the budget's Deposit, the original's call) goes on up to
// the caller, once the original's reservation is given back and a hedge
// leg that started has been stopped and has returned. A panic in the user code the hedge leg
// runs (the policy's CanRetry, the budget's Withdraw, the inner service's
// Ready and Call, the metrics sink's Add), or a runtime.Goexit there, must
// not end the program: it becomes that leg's answer, a
// [*tower.PanicError] error that names what panicked "on the goroutine of
// a Hedge's hedge leg". If it comes first, the caller gets it; if the
// original has answered already, no caller is left to hear of it, and it
// is logged, with its stack, to log/slog's default logger. The hedge's
// reservation is given back either way.
//
// No hedge is armed for a request whose ctx has a deadline that the delay
// and then the time a hedge is likely to take would reach: a hedge that
// cannot answer in time only adds load. The time a hedge is likely to take
// is the median of the previous period's latencies, as the delay is its
// percentile.
//
// Latencies are recorded for the winner only, and only if it succeeded,
// in milliseconds rounded up: the original's from its call, a hedge's
// from its own call. They go to the current period's histogram; the delay
// is read from the previous period's (see [New]).
//
// Each Call deposits into the Hedge's budget, and each hedge sent
// withdraws from it; a hedge the budget cannot pay for is not sent.
//
// A hedge of a request whose context carries a [metrics.Tracer] (see
// [metrics.WithTracer]) is reported to it, on the hedge leg: StartAttempt
// once the policy and the budget have let the hedge go, with attempt
// number 2 and the delay; then the hedge's Ready and Call run under the
// context StartAttempt returned; then EndAttempt, with the hedge's error,
// which is the context's if the original answered first. A panic in the
// Tracer is the leg's, as a panic in its other user code is. A call whose
// hedge is never sent does not look for a Tracer.
//
// A call that cannot be hedged allocates nothing. One whose hedge is armed
// allocates the original's cancellable context, the record of the race,
// its timer and the timer's callback. A hedge that is sent adds its own
// context and goroutine.
//
// A Hedge is safe for concurrent use. Its zero value is not usable; build
// one with [New] or [NewLayer]. Req and Res are the request and response
// types.
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
	preload   []uint64 // latencies in ms for the read histogram, for tests
}

// WithMetrics makes the Hedge report to sink: Hedged +1 for each hedge it
// sends, once the hedge's Ready has succeeded and just before its Call.
// Originals are not counted, nor a hedge that the policy, the budget, a
// failed Ready or the original's answer stopped before it was sent. The
// default, and a nil sink, is no metrics: then the only cost is a nil check
// per hedge.
func WithMetrics(sink metrics.Sink) Option {
	return func(o *options) { o.sink = sink }
}

// WithBudget makes hedges draw on b, which may be shared with other Hedges
// and with retry policies (retry.WithBudget), so that retries and hedges
// together stay within one budget. Each call deposits once; each hedge
// sent withdraws once. Under a Retry whose policy deposits into the same
// budget, give retry.DrawOnly(b): the Hedge sees each attempt, and its
// deposits would grow the budget with the retries it is meant to bound. A nil b means no budget: a hedge is sent whenever
// the delay passes, as in tower. WithBudget panics if b is a typed nil,
// such as a nil *retry.TPSBudget, which is more likely a budget not yet
// built than a wish for none.
//
// Without this option, each Hedge has a budget of its own,
// retry.NewTPSBudget(10*time.Second, 10, 1-percentile): over the last 10
// seconds, hedges may add the share of requests the percentile leaves
// above it, plus 10 per second, as Finagle caps its backup requests at the
// extra load the percentile implies. It only bites when latencies shift:
// once the previous period's percentile no longer describes the current
// one, nearly every request would otherwise be sent twice.
func WithBudget(b retry.Budget) Option {
	if b != nil && isnil.Is(b) {
		panic(fmt.Sprintf("hedge.WithBudget: b is a nil %T; pass nil for no budget", b))
	}
	return func(o *options) { o.budget, o.budgetSet = b, true }
}

// New returns inner wrapped in a Hedge that follows policy. The hedge's
// delay is the percentile (a quantile, in [0, 1]: 0.9 for p90) of the
// latencies recorded over the previous period, once at least minDataPoints
// were; until then, and for a request the policy does not clone, no hedge
// is sent.
//
// The percentile is taken as HdrHistogram takes it, as tower does: the
// smallest latency that at least ⌈percentile·n⌉ of the n latencies do not
// exceed. Latencies are kept in whole milliseconds to 3 significant
// digits: exactly up to 2047ms; above, a percentile comes out at most 0.1%
// high; beyond 4,194,303ms (69m54s) they count as that. Each of a Hedge's
// two histograms takes 16 KiB once it has recorded a latency under 2048ms,
// and 8 KiB for each power of two above that in which it has recorded one:
// 104 KiB at most.
//
// New panics if inner or policy is nil (a typed nil too), percentile is
// outside [0, 1] or NaN, minDataPoints is negative, period is not
// positive, or an option is nil. A period too long to ever pass, up to
// math.MaxInt64, never ends: no period's latencies are ever read, and no
// hedge is sent.
func New[Req, Res any](inner tower.Service[Req, Res], policy Policy[Req], minDataPoints int, percentile float64, period time.Duration, opts ...Option) *Hedge[Req, Res] {
	if isnil.Is(inner) {
		panic("hedge.New: nil inner service")
	}
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
	if o.preload != nil {
		h.histo.preload(o.preload)
	}
	return h
}

// NewLayer returns a Layer that wraps each service in a Hedge, as [New]
// does. Each Hedge has a histogram of its own, and a budget of its own
// unless [WithBudget] shares one. It panics on the arguments New panics
// on.
func NewLayer[Req, Res any](policy Policy[Req], minDataPoints int, percentile float64, period time.Duration, opts ...Option) tower.Layer[Req, Res] {
	newOptions("hedge.NewLayer", policy, minDataPoints, percentile, period, opts) // now, not when the layer is used
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return New(inner, policy, minDataPoints, percentile, period, opts...)
	})
}

// newOptions validates the arguments of the function named fn and applies
// opts.
func newOptions[Req any](fn string, policy Policy[Req], minDataPoints int, percentile float64, period time.Duration, opts []Option) options {
	if isnil.Is(policy) {
		panic(fn + ": nil policy")
	}
	if !(percentile >= 0 && percentile <= 1) { // NaN too
		panic(fmt.Sprintf("%s: percentile must be between 0 and 1, got %v", fn, percentile))
	}
	if minDataPoints < 0 {
		panic(fmt.Sprintf("%s: minDataPoints must not be negative, got %d", fn, minDataPoints))
	}
	if period <= 0 {
		panic(fmt.Sprintf("%s: period must be positive, got %v", fn, period))
	}
	return option.Apply[options](fn, opts)
}

// Ready waits for the inner service to be ready for the original, and
// returns its permit wrapped. Nothing is reserved for a hedge. An error
// from the inner service's Ready is returned unchanged.
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
