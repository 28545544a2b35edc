package timeout

import (
	"context"
	"errors"
	"time"

	"github.com/towergo/tower"
)

// Timeout is middleware that fails a call with ErrElapsed if the inner
// service has not answered within a fixed duration of the call starting.
// Readiness is not timed: Ready waits for the inner service as long as it
// takes, or until its ctx ends.
//
// A Timeout is safe for concurrent use. The zero Timeout is not ready to
// use; build one with New or NewLayer. Req and Res are the request and
// response types.
type Timeout[Req, Res any] struct {
	inner tower.Service[Req, Res]
	d     time.Duration
	mode  Mode
	wraps tower.WrapPool[Req, Res]
}

// New returns inner wrapped in a Timeout of d, in Cooperative mode unless an
// option says otherwise. It panics if inner is nil, d is not positive, or an
// option is nil.
func New[Req, Res any](inner tower.Service[Req, Res], d time.Duration, opts ...Option) *Timeout[Req, Res] {
	if inner == nil {
		panic("timeout.New: nil inner service")
	}
	o := newOptions("timeout.New", d, opts)
	return &Timeout[Req, Res]{inner: inner, d: d, mode: o.mode}
}

// NewLayer returns a Layer that wraps each service in a Timeout of d, with
// opts. It panics if d is not positive or an option is nil.
func NewLayer[Req, Res any](d time.Duration, opts ...Option) tower.Layer[Req, Res] {
	newOptions("timeout.NewLayer", d, opts) // validate now, not when the layer is used
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return New(inner, d, opts...)
	})
}

// Ready waits for the inner service, untimed, and returns its permit wrapped
// so that the call is timed. An error from the inner service's Ready is
// returned unchanged.
func (t *Timeout[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	p, err := t.inner.Ready(ctx)
	if err != nil {
		return p, err
	}
	return t.wraps.Wrap((*wrapper[Req, Res])(t), p), nil
}

// wrapper is Timeout's tower.Wrapper, kept off Timeout's method set.
type wrapper[Req, Res any] Timeout[Req, Res]

func (w *wrapper[Req, Res]) ReleaseWrapped(inner tower.Permit[Req, Res]) { inner.Release() }

func (w *wrapper[Req, Res]) CallWrapped(ctx context.Context, inner tower.Permit[Req, Res], req Req) (Res, error) {
	// The clock starts here, in the call.
	c := clock{deadline: time.Now().Add(w.d), own: true}
	callCtx := ctx
	if d, ok := ctx.Deadline(); ok && !c.deadline.Before(d) {
		// The caller's deadline comes first, or at the same instant: it
		// governs, and the inner call gets ctx as it is.
		c = clock{deadline: d}
	} else {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithDeadlineCause(ctx, c.deadline, ErrElapsed)
		// Deferred, so it runs after expired has read the context's cause.
		// In Abandon mode a caller that left did so because callCtx ended,
		// so this changes nothing for the inner call still running.
		defer cancel()
	}
	if w.mode == Abandon {
		return abandon(ctx, callCtx, c, inner, req)
	}
	res, err := inner.Call(callCtx, req)
	if c.late(err, true) {
		var zero Res
		return zero, c.expired(ctx, callCtx)
	}
	return res, err
}

// clock is one call's deadline: the Timeout's own, or the caller's when that
// comes first.
type clock struct {
	deadline time.Time
	own      bool // the deadline is the Timeout's: callCtx was derived with it
}

// late reports whether a response that came back now, with err, missed the
// deadline and must be discarded. A response before the deadline is in
// time. One at the very instant of the deadline is in time if tieWins,
// unless it is the inner call giving up because its context ended.
func (c clock) late(err error, tieWins bool) bool {
	now := time.Now()
	switch {
	case now.Before(c.deadline):
		return false
	case now.After(c.deadline) || !tieWins:
		return true
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// expired returns the error for a call that missed its deadline: ErrElapsed
// if the Timeout's deadline came first, and the caller's context's error if
// that context ended first. callCtx's cause tells the two apart after the
// fact, whenever the caller cancelled.
func (c clock) expired(ctx, callCtx context.Context) error {
	if c.own {
		// A nil cause: the deadline has passed but its timer has not fired
		// yet, and the caller's context has not ended either.
		if cause := context.Cause(callCtx); cause == nil || cause == ErrElapsed {
			return ErrElapsed
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return context.DeadlineExceeded // the caller's deadline passed; its timer has not fired yet
}
