package reconnect

import (
	"context"
	"io"
	"runtime"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/lifetime"
	"github.com/towergo/tower/internal/option"
)

// Reconnect is a service that holds one service made by a [MakeService]
// for a target, and makes a new one when that one fails; see the package
// doc. A Reconnect is safe for concurrent use. Its zero value is not usable;
// call [New] or [NewConnected].
type Reconnect[Target, Req, Res any] struct {
	c *core[Target, Req, Res] // shared with a connect goroutine; it must not point back here
}

// New returns a Reconnect that makes its services by calling maker with
// target, with opts. It does not connect until the first Ready. It panics
// if maker is nil (a typed nil too) or an option is nil.
func New[Target, Req, Res any](maker MakeService[Target, Req, Res], target Target, opts ...Option) *Reconnect[Target, Req, Res] {
	option.PanicIf(isnil.Is(maker), "reconnect.New: maker is nil")
	return newReconnect(maker, target, nil, option.Apply[options]("reconnect.New", opts))
}

// NewConnected is [New], starting out with svc, a service already made for
// target. It also panics if svc is nil (a typed nil too).
func NewConnected[Target, Req, Res any](maker MakeService[Target, Req, Res], target Target, svc tower.Service[Req, Res], opts ...Option) *Reconnect[Target, Req, Res] {
	const fn = "reconnect.NewConnected"
	if isnil.Is(maker) {
		panic(fn + ": maker is nil")
	}
	if isnil.Is(svc) {
		panic(fn + ": svc is nil")
	}
	return newReconnect(maker, target, &conn[Req, Res]{svc: svc}, option.Apply[options](fn, opts))
}

func newReconnect[Target, Req, Res any](maker MakeService[Target, Req, Res], target Target, cn *conn[Req, Res], o options) *Reconnect[Target, Req, Res] {
	c := &core[Target, Req, Res]{maker: maker, target: target, log: o.logger}
	c.conn.Store(cn)
	r := &Reconnect[Target, Req, Res]{c: c}
	lifetime.OnUnreachable(r, "a reconnect.Reconnect", (*core[Target, Req, Res]).collected, c)
	return r
}

// Ready returns a permit of the current service, connecting first if there
// is none or if the current one fails its readiness check with an error
// that is not ctx's. It fails with ErrClosed after Close, and with the
// maker's error if the maker's Ready failed.
func (r *Reconnect[Target, Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	p, err := r.c.ready(ctx)
	// A caller waiting for a connect keeps the Reconnect reachable: its
	// cleanup would cancel the connect.
	runtime.KeepAlive(r)
	return p, err
}

// Close cancels a connect in progress and waits for its goroutine, then
// closes the current service if it has a Close method ([io.Closer]) and
// returns that method's error. From then on Ready fails with ErrClosed.
// Permits already handed out are the current service's own. Close is
// idempotent.
func (r *Reconnect[Target, Req, Res]) Close() error {
	return r.c.shutdown(context.Background())
}

// Shutdown does what Close does, but returns ctx.Err() if ctx ends before
// the connect in progress has. That connect goes on until the maker
// returns, and closes the service it made; a later Close or Shutdown waits
// for it again. Shutdown is idempotent.
func (r *Reconnect[Target, Req, Res]) Shutdown(ctx context.Context) error {
	return r.c.shutdown(ctx)
}

// closeService closes svc if it has a Close method.
func closeService[Req, Res any](svc tower.Service[Req, Res]) error {
	if c, ok := svc.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
