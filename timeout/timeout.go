package timeout

import (
	"context"
	"errors"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/mono"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
)

// Timeout is middleware that fails a call with ErrElapsed if the inner
// service has not answered within a fixed duration of the call starting;
// Ready is not timed. A Timeout is safe for concurrent use. The zero
// Timeout is not ready to use; build one with New or NewLayer.
type Timeout[Req, Res any] struct {
	inner tower.Service[Req, Res]
	d     time.Duration
	options
}

// New returns inner wrapped in a Timeout of d. A d too long for the clock,
// up to math.MaxInt64, is a deadline that never comes. New panics if inner
// is nil (a typed nil too), d is not positive, or an option is nil.
func New[Req, Res any](inner tower.Service[Req, Res], d time.Duration, opts ...Option) *Timeout[Req, Res] {
	option.PanicIf(isnil.Is(inner), "timeout.New: nil inner service")
	return &Timeout[Req, Res]{inner: inner, d: d, options: newOptions("timeout.New", d, opts)}
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
// so that the call is timed. An error from the inner Ready is returned
// unchanged.
func (t *Timeout[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	p, err := t.inner.Ready(ctx)
	if err != nil {
		return p, err
	}
	r, token := p.Split()
	if r == nil { // an empty permit breaks the contract: pass it on
		return tower.Permit[Req, Res]{}, nil
	}
	c := &call[Req, Res]{t: t, inner: r}
	return tower.NewPermit(c, token), nil
}

func (c *call[Req, Res]) ReleaseReserved(token uint64) {
	if c.redeem() {
		c.inner.ReleaseReserved(token)
	}
}

func (c *call[Req, Res]) CallReserved(ctx context.Context, token uint64, req Req) (Res, error) {
	if !c.redeem() {
		panic(usedPermit)
	}
	// The inner permit is this call's alone from here.
	inner := c.inner
	c.inner, c.parent = nil, ctx
	callersFirst := c.start(ctx)
	if c.t.mode == Abandon {
		return abandon(c, tower.NewPermit(inner, token), req)
	}
	if callersFirst {
		// The inner call gets the caller's context, not c, which says all
		// it needs to know.
		res, err := inner.CallReserved(c.parent, token, req)
		if late(c.left(), err) {
			var zero Res
			return zero, c.expired()
		}
		return res, err
	}
	return c.cooperate(inner, token, req)
}

// start starts the clock: it sets the call's deadline, the Timeout's or,
// if that comes first or at the same instant, the caller's, and reports
// whether the caller's governs. A duration too long for the clock
// saturates rather than wrapping around into the past.
func (c *call[Req, Res]) start(ctx context.Context) (callersFirst bool) {
	now := mono.Now()
	c.deadline = mono.Add(now, c.t.d)
	d, ok := ctx.Deadline()
	if !ok {
		return false
	}
	at := callerDeadline(now, d)
	if at > c.deadline {
		return false
	}
	c.deadline = at
	// Only this call redeemed c; a stale copy fails its CAS and sets nothing.
	c.state.Store(used | callerGoverns)
	return true
}

// callerDeadline returns the caller's deadline d as a reading of the
// monotonic clock, now being the reading at the call's start. A deadline
// without a monotonic reading is measured from now on the wall clock.
// The reading saturates: a deadline too far ahead never comes, and one
// further back than longAgo is taken as longAgo, so that no difference of
// readings wraps around.
func callerDeadline(now time.Duration, d time.Time) time.Duration {
	at, ok := mono.Of(d)
	if !ok {
		left := time.Until(d)
		if left > 0 {
			return mono.Add(now, left)
		}
		at = now + max(left, longAgo)
	}
	return max(at, now+longAgo)
}

// longAgo is how far back a caller's deadline is taken to be at most: it
// has passed either way. Readings count from the program's start (off by
// decades inside a testing/synctest bubble), well within ±2⁶² ns, so
// neither a reading longAgo from one nor the difference of two can wrap.
const longAgo = -1 << 62

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
	return left < 0 || left == 0 && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled))
}

// expired returns the error for a call that missed its deadline, and
// counts an ErrElapsed. Under the caller's deadline it is the caller's
// context's error; otherwise ErrElapsed, unless the caller cancelled its
// context before the deadline. If no standard context recorded which came
// first, a caller whose context is cancelled by the time the inner call
// returns late is told context.Canceled.
func (c *call[Req, Res]) expired() error {
	if c.has(callerGoverns) {
		// The caller's timer may not have set its context's error yet at
		// the very instant of the deadline.
		if err := c.parent.Err(); err != nil {
			return err
		}
		return context.DeadlineExceeded
	}
	if !c.has(stdBuilt) || context.Cause(c.std.Load().ctx) != ErrElapsed {
		if err := c.parent.Err(); errors.Is(err, context.Canceled) {
			return err
		}
	}
	if c.t.sink != nil {
		c.t.sink.Add(metrics.TimedOut, 1)
	}
	return ErrElapsed
}
