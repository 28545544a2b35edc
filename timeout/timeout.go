package timeout

import (
	"context"
	"errors"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/mono"
	"github.com/towergo/tower/metrics"
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
	sink  metrics.Sink // nil: no metrics
}

// New returns inner wrapped in a Timeout of d, in Cooperative mode unless an
// option says otherwise. It panics if inner is nil, d is not positive, or an
// option is nil.
func New[Req, Res any](inner tower.Service[Req, Res], d time.Duration, opts ...Option) *Timeout[Req, Res] {
	if inner == nil {
		panic("timeout.New: nil inner service")
	}
	o := newOptions("timeout.New", d, opts)
	return &Timeout[Req, Res]{inner: inner, d: d, mode: o.mode, sink: o.sink}
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
	r, token := p.Split()
	if r == nil {
		// An inner service that breaks the contract with an empty permit
		// gets it passed on: its Call panics as the zero Permit's does.
		return tower.Permit[Req, Res]{}, nil
	}
	c := &call[Req, Res]{t: t, held: r}
	return tower.NewPermit(c, token), nil
}

func (c *call[Req, Res]) ReleaseReserved(token uint64) {
	if c.redeem() {
		inner := c.held.(tower.Reserver[Req, Res])
		c.held = nil
		inner.ReleaseReserved(token)
	}
}

func (c *call[Req, Res]) CallReserved(ctx context.Context, token uint64, req Req) (Res, error) {
	if !c.redeem() {
		panic(usedPermit)
	}
	// The inner permit is this call's alone from here: its Reserver is
	// called directly, as its Permit would.
	inner := c.held.(tower.Reserver[Req, Res])
	c.held = ctx
	// The clock starts here, in the call.
	now := mono.Now()
	c.deadline = now + c.t.d
	if d, ok := ctx.Deadline(); ok {
		// A deadline from the monotonic clock (context.WithTimeout's) needs
		// no second reading of it.
		left, ok := mono.Of(d)
		if left -= now; !ok {
			left = time.Until(d)
		}
		if left <= c.t.d {
			// The caller's deadline comes first, or at the same instant: it
			// governs, and expires as the caller's own. A response after it
			// is discarded all the same.
			c.deadline = now + left
			// Store, as the call is the only one to have redeemed c: a
			// stale copy of the permit fails its CAS and sets nothing.
			c.flags.Store(called | callers)
			if c.t.mode == Cooperative {
				// The caller's context says all the inner call needs to know.
				res, err := inner.CallReserved(ctx, token, req)
				if late(c.left(), err) {
					var zero Res
					return zero, c.expired()
				}
				return res, err
			}
		}
	}
	if c.t.mode == Abandon {
		return abandon(c, tower.NewPermit(inner, token), req)
	}
	return c.cooperate(inner, token, req)
}

// cooperate calls inner on the caller's goroutine with c as its context,
// and waits for it to return.
func (c *call[Req, Res]) cooperate(inner tower.Reserver[Req, Res], token uint64, req Req) (Res, error) {
	returned := false
	defer func() {
		if !returned {
			c.end(false) // the inner call panicked: cancel its context
		}
	}()
	res, err := inner.CallReserved(c, token, req)
	returned = true
	left := c.left()
	c.end(left <= 0)
	if late(left, err) {
		var zero Res
		return zero, c.expired()
	}
	return res, err
}

// late reports whether a response that came back with left to go until the
// deadline, and err, missed the deadline and must be discarded. One at the
// very instant of the deadline is in time, as in tower, unless it is the
// inner call giving up because its context ended.
func late(left time.Duration, err error) bool {
	switch {
	case left > 0:
		return false
	case left < 0:
		return true
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// expired returns the error for a call that missed the Timeout's deadline:
// ErrElapsed, unless the caller cancelled its context before the deadline,
// which it then hears about as its own context.Canceled. (A caller deadline
// came after the Timeout's, or it would have governed.) A call under the
// caller's deadline gets the caller's context's error. If the inner call
// never asked for its context's Done channel, nothing recorded which came
// first, and a caller whose context is cancelled by the time the inner call
// returns late is told context.Canceled.
func (c *call[Req, Res]) expired() error {
	err := c.expiredErr()
	if err == ErrElapsed && c.t.sink != nil {
		c.t.sink.Add(metrics.TimedOut, 1)
	}
	return err
}

// expiredErr is expired's error.
func (c *call[Req, Res]) expiredErr() error {
	if c.flags.Load()&callers != 0 {
		// The caller's timer may not have set its context's error yet at
		// the very instant of the deadline.
		if err := c.parent().Err(); err != nil {
			return err
		}
		return context.DeadlineExceeded
	}
	// A built context knows exactly which came first.
	if c.flags.Load()&built != 0 && context.Cause(c.std().ctx) == ErrElapsed {
		return ErrElapsed
	}
	if err := c.parent().Err(); errors.Is(err, context.Canceled) {
		return err
	}
	return ErrElapsed
}
