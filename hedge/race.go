package hedge

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/metrics"
)

// race is one hedged call: the original on the caller's goroutine, the
// hedge on a goroutine started by a timer when the delay passes.
type race[Req, Res any] struct {
	h          *Hedge[Req, Res]
	ctx        context.Context // the caller's
	clone      Req
	cancelOrig context.CancelFunc
	delay      time.Duration // after which the hedge starts
	winner     atomic.Int32  // none, original or hedged: the first leg to answer
	leg        sync.WaitGroup

	mu          sync.Mutex         // orders the original's win and the hedge's start
	cancelHedge context.CancelFunc // the hedge's, once it started

	// The hedge's outcome, written before leg.Done.
	res  Res
	err  error
	perr *tower.PanicError // err, if the hedge leg panicked
}

const (
	none = iota
	original
	hedged
)

// race sends req on inner, and clone delay after start, and returns the
// first answer, once the other leg has returned.
func (h *Hedge[Req, Res]) race(ctx context.Context, inner *tower.Permit[Req, Res], req, clone Req, start time.Time, delay time.Duration) (Res, error) {
	origCtx, cancelOrig := context.WithCancel(ctx)
	defer cancelOrig()
	r := &race[Req, Res]{h: h, ctx: ctx, clone: clone, cancelOrig: cancelOrig, delay: delay}
	r.leg.Add(1)
	t := time.AfterFunc(delay, r.hedge)
	settled := false
	defer func() {
		if !settled { // the original panicked: end the hedge before the panic goes on
			if !r.settle(t) && r.perr != nil {
				guard.Orphan(r.perr) // the hedge's panic won, but the caller hears the original's
			}
		}
	}()
	res, err := inner.Call(origCtx, req)
	end := time.Now()
	won := r.settle(t)
	settled = true
	if !won {
		return r.res, r.err
	}
	if err == nil {
		h.histo.record(end.Sub(start), end)
	}
	return res, err
}

// settle is called once the original has returned. It stops the hedge if
// it has not answered yet, waits for its goroutine, if it started, to
// return, and reports whether the original won.
func (r *race[Req, Res]) settle(t *time.Timer) bool {
	if t.Stop() {
		r.leg.Done() // the hedge never started
		return true
	}
	won := r.winner.CompareAndSwap(none, original)
	if won {
		r.mu.Lock()
		if r.cancelHedge != nil {
			r.cancelHedge()
		}
		r.mu.Unlock()
	}
	r.leg.Wait()
	return won
}

// The PanicError's Where for the user code the hedge leg runs.
const (
	inCanRetry = "the hedge policy's CanRetry, on the goroutine of a Hedge's hedge leg"
	inWithdraw = "the budget's Withdraw, on the goroutine of a Hedge's hedge leg"
	inReady    = "the inner service's Ready, on the goroutine of a Hedge's hedge leg"
	inSink     = "the metrics sink's Add, on the goroutine of a Hedge's hedge leg"
	inCall     = "the inner service's Call, on the goroutine of a Hedge's hedge leg"
	inTracer   = "the request's metrics.Tracer, on the goroutine of a Hedge's hedge leg"
)

// hedge is the hedge leg, run by the timer when the delay has passed. A
// panic or runtime.Goexit in the user code it runs becomes the leg's
// answer, a PanicError, rather than end the program.
func (r *race[Req, Res]) hedge() {
	defer r.leg.Done()
	r.mu.Lock()
	if r.winner.Load() == original {
		r.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(r.ctx)
	r.cancelHedge = cancel
	r.mu.Unlock()
	defer cancel()
	var (
		where string
		trace *legTrace // set if the request's Tracer hears of the hedge
	)
	returned := false
	defer func() {
		if !returned {
			perr := guard.Recovered(where, recover())
			r.answerPanic(perr)
			trace.endPanicked(perr)
		}
	}()
	r.send(ctx, &where, &trace)
	returned = true
}

// send sends the hedge, if the policy and the budget let it, and makes its
// result the call's answer if it comes first. It keeps *where naming the
// user code it runs, and *trace what ends the Tracer's attempt.
func (r *race[Req, Res]) send(ctx context.Context, where *string, trace **legTrace) {
	h := r.h
	if *where = inCanRetry; !h.policy.CanRetry(r.clone) {
		return // no hedge: the original answers
	}
	if *where = inWithdraw; h.budget != nil && !h.budget.Withdraw() {
		return
	}
	*where = inTracer // only a request that is hedged looks for a Tracer
	ctx = startLeg(ctx, r.delay, trace)
	*where = inReady
	p, err := h.inner.Ready(ctx)
	defer p.Release() // if ctx ended, or the sink panics; after the call it does nothing
	if ctx.Err() != nil {
		// The original answered, or the caller gave up, while the hedge
		// waited: the original's answer is the call's.
		*where = inTracer
		(*trace).end(ctx.Err())
		return
	}
	var (
		res        Res
		start, end time.Time
	)
	called := err == nil
	if called {
		if *where = inSink; h.sink != nil {
			h.sink.Add(metrics.Hedged, 1)
		}
		*where = inCall
		start = time.Now()
		res, err = p.Call(ctx, r.clone)
		end = time.Now()
	}
	// An error from the inner service's Ready (it is broken for good) is
	// this leg's answer too, as in tower.
	if r.winner.CompareAndSwap(none, hedged) {
		r.res, r.err = res, err
		r.cancelOrig()
		if called && err == nil {
			h.histo.record(end.Sub(start), end)
		}
	}
	*where = inTracer
	(*trace).end(err)
}

// A legTrace is what a hedge leg keeps to end its attempt with the
// request's Tracer, if it started one.
type legTrace struct {
	t   metrics.Tracer // nil: no attempt to end
	ctx context.Context
}

// startLeg tells the Tracer ctx carries, if any, that the hedge starts
// now, and returns the context it runs under, with *trace set to what ends
// it. It keeps tracing off the hedge leg's stack frames, lest the leg
// outgrow its goroutine's first stack.
func startLeg(ctx context.Context, delay time.Duration, trace **legTrace) context.Context {
	t := metrics.TracerFrom(ctx)
	if t == nil {
		return ctx
	}
	ctx = t.StartAttempt(ctx, metrics.Attempt{Kind: metrics.HedgeAttempt, N: 2, Delay: delay})
	*trace = &legTrace{t: t, ctx: ctx}
	return ctx
}

// end tells the Tracer that the hedge ended with err, if it was told the
// hedge started. It forgets the Tracer first, so that a panic in
// EndAttempt does not have it told twice.
func (lt *legTrace) end(err error) {
	if lt == nil {
		return
	}
	if t := lt.t; t != nil {
		lt.t = nil
		t.EndAttempt(lt.ctx, err)
	}
}

// endPanicked is end for the leg's deferred function, with perr, the
// panic that ended the leg: a panic in EndAttempt there is logged.
func (lt *legTrace) endPanicked(perr *tower.PanicError) {
	if lt == nil {
		return
	}
	perr2 := guard.Call(inTracer, func() { lt.end(perr) })
	if perr2 != nil {
		guard.Orphan(perr2)
	}
}

// answerPanic makes perr the leg's answer, the caller's if the leg wins;
// if the original answered already, perr is logged.
func (r *race[Req, Res]) answerPanic(perr *tower.PanicError) {
	if !r.winner.CompareAndSwap(none, hedged) {
		guard.Orphan(perr)
		return
	}
	r.err, r.perr = perr, perr
	r.cancelOrig()
}
