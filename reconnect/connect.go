package reconnect

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/internal/isnil"
)

// core is the part of a Reconnect that a connect goroutine uses.
type core[Target, Req, Res any] struct {
	maker  MakeService[Target, Req, Res]
	target Target

	// conn is the current service, if any: set under mu by a connect, and
	// read and cleared without it.
	conn atomic.Pointer[conn[Req, Res]]

	mu      sync.Mutex
	attempt *attempt[Req, Res] // the connect in progress, if any
	pending *ConnectError      // a failed connect nobody waited for; the next caller gets it
	err     error              // set for good: ErrClosed, or the maker's Ready failed
	failed  int                // connects that failed since the last one that did not

	log *slog.Logger // nil: no logging
}

// conn is one service the maker made. Its address tells one service from
// the next, so that a failure of an old one cannot drop a new one.
type conn[Req, Res any] struct {
	svc tower.Service[Req, Res]
}

// attempt is one connect, and the callers waiting for it.
type attempt[Req, Res any] struct {
	done   chan struct{} // closed when the connect has finished
	cancel context.CancelFunc

	// Guarded by core.mu.
	waiters  int           // callers waiting for the outcome
	finished bool          // the outcome is in: waiters no longer changes
	err      *ConnectError // the connect failed; nil if it succeeded
	failed   int           // if it failed, core.failed counting it
}

// ready asks the current service, or connects, or waits for the connect in
// progress, and asks the new service.
func (c *core[Target, Req, Res]) ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	reconnected := false // this caller has waited for a connect
	for {
		if cn := c.conn.Load(); cn != nil {
			p, err := c.serviceReady(ctx, cn)
			if err == nil || isCtxErr(ctx, err) {
				return p, err
			}
			c.drop(cn, err)
			if reconnected {
				// A service made for this caller failed at once: report
				// it rather than connect again, and again.
				return failedPermit[Req, Res](&ConnectError{Err: err}), nil
			}
			continue
		}
		a, p, err := c.join(ctx)
		if a == nil {
			if err != nil || p.Held() {
				return p, err
			}
			continue // a connect finished meanwhile
		}
		if err := c.wait(ctx, a); err != nil {
			return tower.Permit[Req, Res]{}, err
		}
		reconnected = true
		if a.err != nil {
			return failedPermit[Req, Res](a.err), nil
		}
		// Connected, or closed or broken, which the next round reports.
	}
}

// join returns the connect in progress, starting one if none is, with the
// caller counted among its waiters; or the error of a Reconnect that is
// closed or broken, the permit of a failed connect nobody waited for, or
// nothing if there is a service now.
func (c *core[Target, Req, Res]) join(ctx context.Context) (*attempt[Req, Res], tower.Permit[Req, Res], error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, tower.Permit[Req, Res]{}, c.err
	}
	if c.conn.Load() != nil {
		return nil, tower.Permit[Req, Res]{}, nil
	}
	if c.pending != nil {
		err := c.pending
		c.pending = nil
		return nil, failedPermit[Req, Res](err), nil
	}
	a := c.attempt
	if a == nil {
		a = c.start(ctx)
	}
	a.waiters++
	return a, tower.Permit[Req, Res]{}, nil
}

// start starts a connect, with no caller waiting for it yet. c.mu must be
// held, and no connect be in progress.
func (c *core[Target, Req, Res]) start(ctx context.Context) *attempt[Req, Res] {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a := &attempt[Req, Res]{done: make(chan struct{}), cancel: cancel}
	c.attempt = a
	go c.connect(cctx, a)
	return a
}

// wait waits for a to finish, or for ctx to end. A connect that finished
// as ctx ended still counts: its outcome is the caller's.
func (c *core[Target, Req, Res]) wait(ctx context.Context, a *attempt[Req, Res]) error {
	select {
	case <-a.done:
		return nil
	case <-ctx.Done():
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.finished {
		return nil
	}
	a.waiters--
	return ctx.Err()
}

// Where the user code that panicked ran, for the PanicError's Where.
const (
	inMakerReady = "the maker's Ready, on a Reconnect's connect goroutine"
	inMakerCall  = "the maker's Call, on a Reconnect's connect goroutine"
	inClose      = "the Close of a service made after the Reconnect closed, on its connect goroutine"
)

// connect runs one connect on its own goroutine and records its outcome.
// A panic or runtime.Goexit in the maker counts as the maker's error; if
// the Reconnect was closed meanwhile, nobody will hear of it, and it goes
// to guard.Orphan, as does a panic in the Close of a service made after
// Close. A failure is logged before the waiters are told, so Close, which
// waits for the connect, waits for the log too.
func (c *core[Target, Req, Res]) connect(ctx context.Context, a *attempt[Req, Res]) {
	var (
		failed error // the failure the waiters heard of, to log
		broken bool  // failed is the maker's Ready's
	)
	where, returned := inMakerReady, false
	defer func() {
		if !returned {
			perr := guard.Recovered(where, recover())
			if where == inClose {
				guard.Orphan(perr)
			} else if _, heard := c.record(a, nil, where == inMakerReady, perr); !heard {
				guard.Orphan(perr)
			} else {
				failed, broken = perr, where == inMakerReady
			}
		}
		if failed != nil {
			c.logConnect(a, failed, broken)
		}
		a.cancel()
		close(a.done)
	}()
	svc, makerBroken, err := c.make(ctx, &where)
	discard, heard := c.record(a, svc, makerBroken, err)
	if discard != nil {
		where = inClose
		closeService(discard)
	}
	if heard {
		failed, broken = err, makerBroken
	}
	returned = true
}

// make asks the maker for a new service. broken reports that the maker's
// own Ready failed; ctx ends only when the Reconnect closes. It sets
// *where to the maker's Call once it calls it.
func (c *core[Target, Req, Res]) make(ctx context.Context, where *string) (svc tower.Service[Req, Res], broken bool, err error) {
	p, err := c.maker.Ready(ctx)
	if err != nil {
		return nil, ctx.Err() == nil, err
	}
	*where = inMakerCall
	svc, err = p.Call(ctx, c.target)
	if err == nil && isnil.Is(svc) {
		err = ErrNilService
	}
	return svc, false, err
}

// record records the outcome of the connect a: the service it made, or
// its error, which broke the maker for good if broken is set. If the
// Reconnect closed while connecting, it returns the service to close and
// heard false: nobody will hear of the outcome.
func (c *core[Target, Req, Res]) record(a *attempt[Req, Res], svc tower.Service[Req, Res], broken bool, err error) (discard tower.Service[Req, Res], heard bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempt = nil
	a.finished = true
	if c.err != nil {
		return svc, false // closed while connecting
	}
	if broken {
		c.err = err
	} else if err != nil {
		a.err = &ConnectError{Err: err}
		if a.waiters == 0 {
			c.pending = a.err
		}
		c.failed++
		a.failed = c.failed
	} else {
		c.failed = 0
		c.conn.Store(&conn[Req, Res]{svc: svc})
	}
	return nil, true
}
