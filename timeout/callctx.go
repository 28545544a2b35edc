package timeout

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/mono"
)

// call is the record behind a Timeout's permit, and then the context of the
// call it times. It is allocated once per request and never reused, since
// the inner service may keep the context. Its permit carries the inner
// permit's token; the record keeps the inner permit's Reserver until the
// call starts.
//
// Most inner calls never wait on their context, so the context is lazy:
// Err reads the clock, and nothing runs at the deadline. Only when asked
// for Done, a derived cancellable context or the cause does it build a
// standard context.WithDeadlineCause, and hand everything to that.
type call[Req, Res any] struct {
	state    atomic.Uint32 // the flags below
	t        *Timeout[Req, Res]
	inner    tower.Reserver[Req, Res]   // the inner permit's, until the call starts
	parent   context.Context            // the caller's, from the call's start
	deadline time.Duration              // mono.Now() at the deadline, from the call's start
	std      atomic.Pointer[stdContext] // built once needed: see build
}

// The flags of a call's state.
const (
	used          = 1 << iota // the permit was called or released
	callerGoverns             // the caller's deadline comes first: it is the call's
	returned                  // the inner call returned: the context is cancelled
	returnedLate              // it returned at or after the deadline
	stdBuilt                  // std is built: it answers everything
	expirySeen                // Err has reported the deadline
)

// usedPermit is the panic of a stale copy's Call.
const usedPermit = "tower: Call on a timeout permit that was already called or released"

// redeem marks the permit used, and reports whether it was not yet.
func (c *call[Req, Res]) redeem() bool { return c.state.CompareAndSwap(0, used) }

// has reports whether every flag of f is set.
func (c *call[Req, Res]) has(f uint32) bool { return c.state.Load()&f == f }

// stdContext is the standard context a call builds when it must.
type stdContext struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// left returns the time left until the deadline: negative once it passed.
func (c *call[Req, Res]) left() time.Duration { return c.deadline - mono.Now() }

// Deadline is the caller's when that governs, and otherwise the Timeout's,
// as a time with a monotonic reading, which costs no clock reading and
// keeps a context under this one on the monotonic clock.
func (c *call[Req, Res]) Deadline() (time.Time, bool) {
	if c.has(callerGoverns) {
		return c.parent.Deadline()
	}
	return mono.Time(c.deadline), true
}

func (c *call[Req, Res]) Done() <-chan struct{} { return c.build().Done() }

func (c *call[Req, Res]) Err() error {
	switch f := c.state.Load(); {
	case f&stdBuilt != 0:
		return c.std.Load().ctx.Err()
	case f&returnedLate != 0:
		return context.DeadlineExceeded
	case f&returned != 0:
		return context.Canceled
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if c.left() > 0 {
		return nil
	}
	c.state.Or(expirySeen)
	return context.DeadlineExceeded
}

// Value looks the key up in the parent. Once the context is known to have
// ended, it builds the standard context first, so that context.Cause,
// which looks for the cause through Value, finds ErrElapsed.
func (c *call[Req, Res]) Value(key any) any {
	if c.state.Load()&(stdBuilt|returned|expirySeen) != 0 {
		return c.build().Value(key)
	}
	return c.parent.Value(key)
}

func (c *call[Req, Res]) String() string { return "timeout.call" }

// build returns the standard context, building it on first use. A context
// built after the call returned is cancelled at once, as the standard one
// would have been.
func (c *call[Req, Res]) build() context.Context {
	if s := c.std.Load(); s != nil {
		return s.ctx
	}
	// Built without a lock, as the parent may be another call's lazy
	// context, which builds its own: of two goroutines building at once,
	// one wins and the other's context is cancelled unused. The deadline's
	// monotonic reading keeps the timer from firing early when the wall
	// clock is stepped forward.
	d, _ := c.Deadline()
	s := new(stdContext)
	s.ctx, s.cancel = context.WithDeadlineCause(c.parent, d, ErrElapsed)
	if !c.std.CompareAndSwap(nil, s) {
		s.cancel()
		return c.std.Load().ctx
	}
	if c.state.Or(stdBuilt)&returned != 0 {
		s.cancel()
	}
	return s.ctx
}

// end marks the call as returned, late or not, and cancels the standard
// context if one was built. Of end and build, at least one sees the
// other's flag, so the standard context is cancelled either way.
func (c *call[Req, Res]) end(late bool) {
	f := uint32(returned)
	if late {
		f |= returnedLate
	}
	if c.state.Or(f)&stdBuilt != 0 {
		c.std.Load().cancel()
	}
}
