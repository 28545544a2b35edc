package timeout

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/towergo/tower/internal/mono"
)

// call is the record behind a Timeout's permit, and then the context of the
// call it times. It is allocated once per request and never reused: the
// inner service may keep the context after the call, so it must stay what
// it was. Its permit carries the inner permit's token; the record keeps the
// inner permit's Reserver until the call starts.
//
// Most inner calls never wait on their context: they answer, and the
// context only has to say what its deadline is. So the context is lazy.
// Err reads the clock; nothing runs at the deadline. Only when something
// asks for Done, derives a cancellable context from it, or asks for the
// cause of its end, does it build a standard context.WithDeadlineCause to do
// the rest, and from then on it hands everything to that. A call whose inner
// service never waits costs one allocation of 48 bytes and no timer.
//
// The record is kept that small, with what only some calls need built on
// demand, because on the request path its allocation and the garbage
// collection it brings cost more than anything but the two clock reads:
// measured side by side (BenchmarkTower/timeout in ../bench), a record of
// 96 bytes made the request about 15% dearer and one of 64 bytes 5%. For
// that, one field holds the inner permit's Reserver until the call starts,
// and the caller's context from then on: the two are never needed at once.
// Reading the context back is a type assertion, which Go caches per call
// site.
type call[Req, Res any] struct {
	flags    atomic.Uint32 // called, ended, endedLate, built, expiredSeen, callers
	t        *Timeout[Req, Res]
	held     any                        // tower.Reserver[Req, Res] until the call starts, then context.Context
	deadline time.Duration              // mono.Now() at the deadline, from the call's start
	standard atomic.Pointer[stdContext] // once Done is asked for
}

const (
	called      = 1 << iota // the permit was called or released
	ended                   // the call returned: the context is cancelled
	endedLate               // it returned at or after its deadline
	built                   // std is built: it answers everything
	expiredSeen             // Err has reported the deadline
	callers                 // the deadline is the caller's, which comes first
)

// usedPermit is the panic of a stale copy's Call.
const usedPermit = "tower: Call on a timeout permit that was already called or released"

// redeem marks the permit used, and reports whether it was not yet. The
// record is never reused, so one bit tells a stale copy.
func (c *call[Req, Res]) redeem() bool { return c.flags.CompareAndSwap(0, called) }

// stdContext is the standard context a call builds when it must.
type stdContext struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// parent returns the caller's context, once the call has started.
func (c *call[Req, Res]) parent() context.Context { return c.held.(context.Context) }

// std returns the standard context, once the built flag says there is one.
func (c *call[Req, Res]) std() *stdContext { return c.standard.Load() }

// left returns the time left until the deadline: negative once it passed.
func (c *call[Req, Res]) left() time.Duration { return c.deadline - mono.Now() }

// Deadline is the caller's when that governs, and otherwise the Timeout's,
// as a time with a monotonic reading: it costs no clock reading, and a
// Timeout or a standard context under this one measures it on the
// monotonic clock too.
func (c *call[Req, Res]) Deadline() (time.Time, bool) {
	if c.flags.Load()&callers != 0 {
		return c.parent().Deadline()
	}
	return mono.Time(c.deadline), true
}

func (c *call[Req, Res]) Done() <-chan struct{} { return c.build().Done() }

func (c *call[Req, Res]) Err() error {
	f := c.flags.Load()
	switch {
	case f&built != 0:
		return c.std().ctx.Err()
	case f&ended != 0 && f&endedLate != 0:
		return context.DeadlineExceeded
	case f&ended != 0:
		return context.Canceled
	}
	if err := c.parent().Err(); err != nil {
		return err
	}
	if c.left() > 0 {
		return nil
	}
	c.flags.Or(expiredSeen)
	return context.DeadlineExceeded
}

// Value looks the key up in the parent. Once the context is known to have
// ended, it builds the standard context first, so that context.Cause, which
// asks Err and then looks for the nearest cancellation's cause through
// Value, finds ErrElapsed where the deadline ended the call.
func (c *call[Req, Res]) Value(key any) any {
	if c.flags.Load()&(built|ended|expiredSeen) != 0 {
		return c.build().Value(key)
	}
	return c.parent().Value(key)
}

func (c *call[Req, Res]) String() string { return "timeout.call" }

// build returns the standard context, building it on first use. A context
// built after the call returned is cancelled at once, as the standard one
// would have been.
func (c *call[Req, Res]) build() context.Context {
	if s := c.standard.Load(); s != nil {
		return s.ctx
	}
	// Built without a lock: WithDeadlineCause asks the parent for Done,
	// and the parent may be another call's lazy context, which builds its
	// own. Of two goroutines building at once, one wins; the other's
	// context is cancelled unused. The deadline carries a monotonic
	// reading, so the timer follows the clock the Timeout keeps: one set
	// by the wall clock would fire early when that clock is stepped
	// forward, and the inner call would give up before the deadline.
	d, _ := c.Deadline()
	s := new(stdContext)
	s.ctx, s.cancel = context.WithDeadlineCause(c.parent(), d, ErrElapsed)
	if !c.standard.CompareAndSwap(nil, s) {
		s.cancel()
		return c.standard.Load().ctx
	}
	if c.flags.Or(built)&ended != 0 {
		s.cancel()
	}
	return s.ctx
}

// end marks the call as returned, at or after its deadline or not, and
// cancels the standard context if one was built. Between end and build,
// one sees the other's flag, or both do: either way the standard context is
// cancelled.
func (c *call[Req, Res]) end(late bool) {
	f := uint32(ended)
	if late {
		f |= endedLate
	}
	if c.flags.Or(f)&built != 0 {
		c.std().cancel()
	}
}
