package breaker

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
)

// Breaker is middleware that stops sending requests to a service that
// fails; the package doc describes its states and how results count.
//
// A Breaker starts no goroutine. The closed state, with consecutive
// failures as the only trip condition, takes no lock and allocates
// nothing per request.
//
// A Breaker is safe for concurrent use. The zero Breaker is not usable;
// build one with [New] or [NewLayer].
type Breaker[Req, Res any] struct {
	inner   tower.Service[Req, Res]
	failure func(res Res, err error) bool
	opts    options
	wraps   tower.WrapPool[Req, Res]
	cur     atomic.Pointer[period[Req, Res]] // replaced, under mu, at each change

	mu       sync.Mutex
	window   *window       // nil: no failure ratio
	trips    int           // trips since the breaker last closed
	wake     chan struct{} // closed when a waiting Ready should look again; nil if nobody waits
	waiters  int
	timer    *time.Timer       // wakes the waiters when the open delay ends
	timerFor *period[Req, Res] // the open period the timer is armed for, if any
	events   []event           // changes not yet told
	telling  bool              // a goroutine is telling events
}

// New returns inner wrapped in a closed Breaker, with opts, that counts a
// result as a failure of inner when failure reports true for it, as
// [AnyError] does for errors. It panics if inner (a typed nil too),
// failure or an option is nil.
func New[Req, Res any](inner tower.Service[Req, Res], failure func(res Res, err error) bool, opts ...Option) *Breaker[Req, Res] {
	option.PanicIf(isnil.Is(inner), "breaker.New: nil inner service")
	option.PanicIf(failure == nil, "breaker.New: nil failure classifier")
	return newBreaker(inner, failure, newOptions("breaker.New", opts))
}

func newBreaker[Req, Res any](inner tower.Service[Req, Res], failure func(Res, error) bool, o options) *Breaker[Req, Res] {
	b := &Breaker[Req, Res]{inner: inner, failure: failure, opts: o, window: newWindow(&o)}
	b.cur.Store(&period[Req, Res]{b: b, state: Closed})
	return b
}

// NewLayer returns a Layer that wraps each service in a Breaker of its
// own, as [New] does: the Breakers share what the options give (a budget,
// a sink, a callback) and nothing else, so each trips alone. It panics if
// failure or an option is nil; its Wrap panics if the service is nil.
func NewLayer[Req, Res any](failure func(res Res, err error) bool, opts ...Option) tower.Layer[Req, Res] {
	option.PanicIf(failure == nil, "breaker.NewLayer: nil failure classifier")
	o := newOptions("breaker.NewLayer", opts) // now, not when the layer is used
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		option.PanicIf(isnil.Is(inner), "breaker.NewLayer: nil inner service")
		return newBreaker(inner, failure, o)
	})
}

// AnyError is a failure classifier for [New] that counts every error but
// context.Canceled as a failure, and no response; its type argument is
// inferred: New(inner, AnyError, ...). A cancelled call says nothing of
// the backend (a hedge whose twin won cancels it); a backend too slow for
// the caller's deadline is failing that caller.
func AnyError[Res any](_ Res, err error) bool {
	return err != nil && !errors.Is(err, context.Canceled)
}

// State returns the breaker's state now. The first Ready after the open
// delay moves it to half-open; until one comes, State reports Open.
func (b *Breaker[Req, Res]) State() State { return b.cur.Load().state }

// Ready waits, bounded by ctx, until the breaker admits a request, then
// for the inner service, and returns its permit or its error unchanged.
// It never fails with an error of its own, which would mean broken for
// good: waiting with a done ctx, it returns ctx.Err() at once, so that a
// LoadShed outside sheds and a balancer skips the endpoint. If the breaker
// changes state meanwhile, it gives the inner permit back and starts again.
func (b *Breaker[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	for {
		p := b.cur.Load()
		if p.state != Closed {
			var err error
			if p, err = b.admit(ctx); err != nil {
				return tower.Permit[Req, Res]{}, err
			}
		}
		if ip, again, err := b.innerReady(ctx, p); !again {
			return ip, err
		}
	}
}

// Isolate opens the breaker until [Breaker.Reset], even if it is open
// already, whatever the inner service's health: no probe goes.
func (b *Breaker[Req, Res]) Isolate() {
	b.do(func() bool {
		return b.set(&period[Req, Res]{b: b, state: Open, until: forever})
	})
}

// Reset closes the breaker, whatever its state, with its counts of
// failures and trips started again, as a successful probe does.
func (b *Breaker[Req, Res]) Reset() {
	b.do(func() bool { return b.closeLocked() })
}
