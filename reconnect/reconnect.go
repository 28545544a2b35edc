package reconnect

import (
	"context"
	"errors"
	"io"
	"runtime"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/lifetime"
)

// Reconnect is a service that holds one service made by a [MakeService] for
// a target, and makes a new one when that one fails: tower's Reconnect.
//
// Ready connects if there is no service yet, and otherwise asks the
// current one. If the current service fails its readiness check (an error
// that is not ctx's: it is broken for good), Reconnect drops it, closes it
// if it has a Close method, and connects again, within the same Ready.
//
// A failed connect does not fail Ready, which would break the Reconnect for
// good. Ready returns a permit instead, and that permit's Call returns a
// [*ConnectError] without sending the request anywhere; the next Ready
// connects again. Every caller that was waiting for the failed connect gets
// such a permit; if nobody was waiting (the caller that started it gave
// up), the next caller gets it, as in tower, where the failure is reported
// by the next call. The same goes for a service that fails its very first
// readiness check, right after it was made: so a maker that keeps handing
// out a broken service costs one connect per Ready, not a busy loop.
//
// Only a failure of the maker's own Ready fails Ready: the maker is broken
// for good, and so is the Reconnect, whose every Ready returns that error.
//
// # Panics
//
// The maker runs on the connect goroutine, where a panic must not end the
// program: it is recovered into a [*tower.PanicError], and goes where an
// error from the same place would. A panic in the maker's Ready is the
// maker failing its readiness: the Reconnect is broken for good, and every
// Ready returns the PanicError. A panic in the maker's Call is a failed
// connect: the callers waiting get a permit whose Call returns a
// *ConnectError that wraps the PanicError, and the next Ready connects
// again. A panic in the Close of a service made after Close, which the
// connect goroutine closes, reaches no caller: it is logged (log/slog's
// default logger). runtime.Goexit in any of them does the same, with a
// PanicError that says so.
//
// A panic in the current service's Ready, which runs on the caller's
// goroutine, goes on up to that caller. It is that service failing its
// readiness: Reconnect drops it, starts a connect for the next caller,
// and closes it, before the panic leaves Ready. A panic in a permit's
// Call is the caller's, and changes nothing.
//
// # Connecting in the background
//
// One connect runs at a time, on a goroutine of its own, and every caller
// that needs the service waits for that one. A caller whose ctx ends stops
// waiting, and Ready returns ctx.Err(); the connect goes on, and the next
// caller finds its result. So Ready with a done ctx is still a "ready now?"
// question: it starts a connect if none is running and returns at once,
// not ready, unless the service is already there. The connect runs under a
// context that carries the values of the ctx of the caller that started it,
// but not its deadline or cancellation: a connect is shared, and one
// caller leaving must not fail it for the others. To bound a connect, put a
// timeout on the maker; to bound a caller's wait, give its ctx a deadline.
//
// Close cancels a connect in progress, waits for its goroutine, and closes
// the current service; Shutdown does the same, but waits for the connect
// only as long as its ctx lasts. No goroutine runs unless a connect is in
// progress. As a safety net, a Reconnect that becomes unreachable with a
// connect in progress has the connect cancelled by a runtime cleanup,
// which logs a warning. That cleanup runs outside every testing/synctest
// bubble, where cancelling what the bubble made is fatal: a test must
// close what it makes.
//
// A Reconnect is safe for concurrent use. Its zero value is not usable;
// call [New] or [NewConnected]. Target is the type of the target the maker
// connects to; Req and Res are the request and response types of the
// services it makes.
type Reconnect[Target, Req, Res any] struct {
	c *core[Target, Req, Res] // what a connect goroutine shares; it must not point back here
}

// New returns a Reconnect that makes its services by calling maker with
// target, with opts. It does not connect until the first Ready. It panics
// if maker is nil, or a nil pointer (or func, map, chan) in an interface,
// or if an option is nil.
func New[Target, Req, Res any](maker MakeService[Target, Req, Res], target Target, opts ...Option) *Reconnect[Target, Req, Res] {
	const fn = "reconnect.New"
	if isnil.Is(maker) {
		panic(fn + ": maker is nil")
	}
	return newReconnect(maker, target, nil, newOptions(fn, opts))
}

// NewConnected returns a Reconnect that starts out with svc, a service
// already made for target (tower's Reconnect::with_connection), and makes
// new ones by calling maker with target, with opts. It panics if maker or
// svc is nil, or a nil pointer (or func, map, chan) in an interface, or if
// an option is nil.
func NewConnected[Target, Req, Res any](maker MakeService[Target, Req, Res], target Target, svc tower.Service[Req, Res], opts ...Option) *Reconnect[Target, Req, Res] {
	const fn = "reconnect.NewConnected"
	if isnil.Is(maker) {
		panic(fn + ": maker is nil")
	}
	if isnil.Is(svc) {
		panic(fn + ": svc is nil")
	}
	return newReconnect(maker, target, &conn[Req, Res]{svc: svc}, newOptions(fn, opts))
}

func newReconnect[Target, Req, Res any](maker MakeService[Target, Req, Res], target Target, cn *conn[Req, Res], o options) *Reconnect[Target, Req, Res] {
	c := &core[Target, Req, Res]{maker: maker, target: target, log: o.logger}
	c.conn.Store(cn)
	r := &Reconnect[Target, Req, Res]{c: c}
	lifetime.OnUnreachable(r, "a reconnect.Reconnect", (*core[Target, Req, Res]).collected, c)
	return r
}

// Ready returns a permit of the current service, connecting first if there
// is none or if the current one has failed. If ctx ends first, it returns
// ctx.Err(); a connect it started goes on. The permit is the service's own,
// except after a failed connect, when its Call returns a *ConnectError.
// Ready fails with ErrClosed after Close, and with the maker's error if the
// maker's Ready failed (a *tower.PanicError if it panicked).
func (r *Reconnect[Target, Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	c := r.c
	// The path taken by nearly every request: connected, and the service is
	// fine.
	if cn := c.conn.Load(); cn != nil {
		p, err := c.serviceReady(ctx, cn)
		if err == nil || isCtxErr(ctx, err) {
			return p, err
		}
		c.drop(cn, err)
	}
	p, err := c.ready(ctx)
	// A caller waiting for a connect keeps the Reconnect reachable: its
	// cleanup would cancel the connect.
	runtime.KeepAlive(r)
	return p, err
}

// Close cancels a connect in progress and waits for its goroutine, then
// closes the current service if it has a Close method ([io.Closer]) and
// returns that method's error. From then on Ready fails with ErrClosed,
// and so do the callers that were waiting for the connect. Permits already
// handed out are the current service's own: their calls go on, or fail as
// that service's Close makes them. Close is idempotent.
//
// A maker that ignores its ctx holds Close up for as long as it does;
// [Reconnect.Shutdown] bounds that wait.
func (r *Reconnect[Target, Req, Res]) Close() error {
	return r.c.shutdown(context.Background())
}

// Shutdown does what Close does, and returns once the connect in progress,
// if any, has ended, with the current service's Close error, as Close
// does; or it returns ctx.Err() if ctx ends first, as net/http's
// Server.Shutdown does. A connect still running then goes on until the
// maker returns, and closes the service it made, if any; a later Close or
// Shutdown waits for it again. (While a connect runs there is no current
// service to close.) Shutdown is idempotent.
func (r *Reconnect[Target, Req, Res]) Shutdown(ctx context.Context) error {
	return r.c.shutdown(ctx)
}

// isCtxErr reports whether err is ctx's own error: the service was not
// ready before ctx ended, which says nothing about its health.
// A wrapped ctx error counts too: dropping a healthy service for it would
// cost a reconnect.
func isCtxErr(ctx context.Context, err error) bool {
	cerr := ctx.Err()
	return cerr != nil && (err == cerr || errors.Is(err, cerr))
}

// closeService closes svc if it has a Close method.
func closeService[Req, Res any](svc tower.Service[Req, Res]) error {
	if c, ok := svc.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
