package hedge

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
)

// race is one hedged call: the original on the caller's goroutine, the
// hedge on a goroutine started by a timer when the delay passes.
type race[Req, Res any] struct {
	h          *Hedge[Req, Res]
	ctx        context.Context // the caller's
	clone      Req
	cancelOrig context.CancelFunc
	winner     atomic.Int32 // none, original or hedged: the first leg to answer
	leg        sync.WaitGroup

	mu          sync.Mutex
	stopped     bool               // the original won: the hedge must not start
	cancelHedge context.CancelFunc // the hedge's, once it started

	// The hedge's outcome, written before leg.Done.
	res      Res
	err      error
	panicked any
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
	r := &race[Req, Res]{h: h, ctx: ctx, clone: clone, cancelOrig: cancelOrig}
	r.leg.Add(1)
	t := time.AfterFunc(delay, r.hedge)
	settled := false
	defer func() {
		if !settled { // the original panicked: end the hedge before the panic goes on
			r.settle(t)
		}
	}()
	res, err := inner.Call(origCtx, req)
	end := time.Now()
	won := r.settle(t)
	settled = true
	if r.panicked != nil {
		panic(r.panicked)
	}
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
		r.stopped = true
		if r.cancelHedge != nil {
			r.cancelHedge()
		}
		r.mu.Unlock()
	}
	r.leg.Wait()
	return won
}

// hedge is the hedge leg, run by the timer when the delay has passed.
func (r *race[Req, Res]) hedge() {
	defer r.leg.Done()
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(r.ctx)
	r.cancelHedge = cancel
	r.mu.Unlock()
	defer cancel()
	defer func() {
		if v := recover(); v != nil {
			r.panicked = v
			if r.winner.CompareAndSwap(none, hedged) {
				r.cancelOrig()
			}
		}
	}()

	h := r.h
	if !h.policy.CanRetry(r.clone) || (h.budget != nil && !h.budget.Withdraw()) {
		return // no hedge: the original answers
	}
	p, err := h.inner.Ready(ctx)
	if ctx.Err() != nil {
		// The original answered, or the caller gave up, while the hedge
		// waited: the original's answer is the call's.
		p.Release()
		return
	}
	var (
		res        Res
		start, end time.Time
	)
	called := err == nil
	if called {
		if h.sink != nil {
			h.sink.Add(metrics.Hedged, 1)
		}
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
}
