package reconnect

import (
	"context"
	"errors"
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

	conn atomic.Pointer[conn[Req, Res]] // set under mu; read and cleared without

	mu      sync.Mutex
	attempt *attempt[Req, Res] // the connect in progress, if any
	pending *ConnectError      // a failed connect nobody waited for; the next caller gets it
	err     error              // set for good: ErrClosed, or the maker's Ready failed
	failed  int                // connects that failed since the last one that did not

	log *slog.Logger // nil: no logging
}

// conn is one service the maker made. Its address tells it from the next,
// so that a failure of an old one cannot drop a new one.
type conn[Req, Res any] struct {
	svc tower.Service[Req, Res]
}

// attempt is one connect, and the callers waiting for it.
type attempt[Req, Res any] struct {
	done   chan struct{} // closed when the connect has finished
	cancel context.CancelFunc

	// Guarded by core.mu.
	waiters int           // callers waiting for the outcome, until it is in
	err     *ConnectError // the connect failed; nil if it succeeded
	failed  int           // if it failed, core.failed counting it
}

func (c *core[Target, Req, Res]) ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	reconnected := false // this caller has waited for a connect
	for {
		if cn := c.conn.Load(); cn != nil {
			p, err := c.serviceReady(ctx, cn)
			// ctx's own error, wrapped or not, says nothing of the service.
			if err == nil || ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				return p, err
			}
			c.drop(cn, err)
			if reconnected { // a service made for this caller failed at once
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

// join counts the caller among the waiters of the connect in progress,
// which it starts if none is; or returns Ready's outcome, if known now.
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

// start starts a connect. c.mu is held, and no connect is in progress.
func (c *core[Target, Req, Res]) start(ctx context.Context) *attempt[Req, Res] {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a := &attempt[Req, Res]{done: make(chan struct{}), cancel: cancel}
	c.attempt = a
	go c.connect(cctx, a)
	return a
}

// wait waits for a to finish, or for ctx to end. A connect that finished
// as ctx ended still counts.
func (c *core[Target, Req, Res]) wait(ctx context.Context, a *attempt[Req, Res]) error {
	select {
	case <-a.done:
		return nil
	case <-ctx.Done():
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.attempt != a { // the outcome is in
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

// connect runs one connect on its own goroutine. A panic or runtime.Goexit
// in the maker is the maker's error; if the Reconnect closed meanwhile,
// nobody will hear of it and it goes to guard.Orphan, as does one in the
// Close of a service made after Close. A failure is logged before the
// waiters are told, so Close, which waits for the connect, waits for the
// log too.
func (c *core[Target, Req, Res]) connect(ctx context.Context, a *attempt[Req, Res]) {
	var (
		svc    tower.Service[Req, Res]
		err    error
		broken bool // err is the maker's Ready's; ctx ends only when the Reconnect closes
		heard  bool // the waiters heard of the outcome
	)
	where, returned := inMakerReady, false
	defer func() {
		if !returned {
			perr := guard.Recovered(where, recover())
			if where != inClose {
				err, broken = perr, where == inMakerReady
				_, heard = c.record(a, nil, broken, err)
			}
			if !heard {
				guard.Orphan(perr)
			}
		}
		if heard && err != nil {
			c.logConnect(a, err, broken)
		}
		a.cancel()
		close(a.done)
	}()
	p, err := c.maker.Ready(ctx)
	if err != nil {
		broken = ctx.Err() == nil
	} else {
		where = inMakerCall
		if svc, err = p.Call(ctx, c.target); err == nil && isnil.Is(svc) {
			err = ErrNilService
		}
	}
	var discard tower.Service[Req, Res]
	if discard, heard = c.record(a, svc, broken, err); discard != nil {
		where = inClose
		closeService(discard)
	}
	returned = true
}

// record records the outcome of the connect a. If the Reconnect closed
// meanwhile, nobody will hear of it: it returns the service to close.
func (c *core[Target, Req, Res]) record(a *attempt[Req, Res], svc tower.Service[Req, Res], broken bool, err error) (discard tower.Service[Req, Res], heard bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempt = nil
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
