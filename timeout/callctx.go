package timeout

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/mono"
)

// call is the record behind a Timeout's permit, and then the context of the
// call it times. It is allocated once per request and never reused: the
// inner service may keep the context after the call, so it must stay what
// it was.
//
// Most inner calls never wait on their context: they answer, and the
// context only has to say what its deadline is. So the context is lazy.
// Err reads the clock; nothing runs at the deadline. Only when something
// asks for Done, derives a cancellable context from it, or asks for the
// cause of its end, does it build a standard context.WithDeadlineCause to do
// the rest, and from then on it hands everything to that. A call whose inner
// service never waits costs one allocation of 96 bytes and no timer.
type call[Req, Res any] struct {
	tower.Ticket
	t     *Timeout[Req, Res]
	inner tower.Permit[Req, Res] // until the call starts

	parent context.Context
	start  time.Duration // mono.Now() when the call started
	limit  time.Duration // the deadline, as a time after start
	wall   atomic.Int64  // the deadline on the wall clock, in Unix ns, once asked for
	flags  atomic.Uint32 // ended, expiredLate, built, expiredSeen, callers
	std    atomic.Pointer[stdContext]
}

const (
	ended       = 1 << iota // the call returned: the context is cancelled
	endedLate               // it returned at or after its deadline
	built                   // std is built: it answers everything
	expiredSeen             // Err has reported the deadline
	callers                 // the deadline is the caller's, which comes first
)

// stdContext is the standard context a call builds when it must.
type stdContext struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// elapsed returns the time since the call started.
func (c *call[Req, Res]) elapsed() time.Duration { return mono.Now() - c.start }

func (c *call[Req, Res]) Deadline() (time.Time, bool) {
	if c.flags.Load()&callers != 0 {
		return c.parent.Deadline()
	}
	// Computed the first time it is asked for, and then the same for
	// everyone, as the Context contract requires.
	if n := c.wall.Load(); n != 0 {
		return time.Unix(0, n), true
	}
	d := time.Now().Add(c.limit - c.elapsed()).UnixNano()
	if !c.wall.CompareAndSwap(0, d) {
		d = c.wall.Load()
	}
	return time.Unix(0, d), true
}

func (c *call[Req, Res]) Done() <-chan struct{} { return c.build().Done() }

func (c *call[Req, Res]) Err() error {
	f := c.flags.Load()
	switch {
	case f&built != 0:
		return c.std.Load().ctx.Err()
	case f&ended != 0 && f&endedLate != 0:
		return context.DeadlineExceeded
	case f&ended != 0:
		return context.Canceled
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if c.elapsed() < c.limit {
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
	// Built without a lock: WithDeadlineCause asks the parent for Done,
	// and the parent may be another call's lazy context, which builds its
	// own. Of two goroutines building at once, one wins; the other's
	// context is cancelled unused.
	d, _ := c.Deadline()
	s := new(stdContext)
	s.ctx, s.cancel = context.WithDeadlineCause(c.parent, d, ErrElapsed)
	if !c.std.CompareAndSwap(nil, s) {
		s.cancel()
		return c.std.Load().ctx
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
		c.std.Load().cancel()
	}
}
