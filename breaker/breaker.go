package breaker

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/mono"
)

// Breaker is middleware that stops sending requests to a service that
// fails: a circuit breaker whose open state is a service that is not
// ready. See the package doc for the states and how it moves between
// them.
//
// Ready, while the breaker is closed, passes through to the inner service
// and wraps its permit. While it is open, and while it is half-open with
// every probe place taken, Ready waits, bounded by ctx, until a probe may
// go; with a done ctx it returns ctx.Err() at once, which is how a
// LoadShed outside sheds and a balancer skips the endpoint. Once the
// breaker has admitted a request, Ready waits for the inner service, and
// gives the admission back if that Ready fails; its error is returned
// unchanged. The breaker itself never fails Ready with an error of its
// own.
//
// The call of a permit classifies its result with the breaker's failure
// classifier and records it; a call that panics counts as a failure, and
// the panic goes on up.
//
// A Breaker starts no goroutine; a Ready waiting for the open delay to end
// is woken by a timer, armed while someone waits. The closed state, with
// consecutive failures as the only trip condition, takes no lock and
// allocates nothing per request.
//
// A Breaker is safe for concurrent use. The zero Breaker is not usable;
// build one with [New] or [NewLayer]. Req and Res are the request and
// response types.
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
	timerFor *period[Req, Res] // the open period the timer is armed for, nil if none
	events   []event           // changes not yet told
	telling  bool              // a goroutine is telling events
}

// New returns inner wrapped in a Breaker, closed, that counts a result as
// a failure of inner when failure reports true for it, with opts. Give
// [AnyError] to count every error but a caller's own cancellation; a
// protocol's adapter may offer one that reads its status. It
// panics if inner (a typed nil too) or failure is nil, or an option is
// nil.
func New[Req, Res any](inner tower.Service[Req, Res], failure func(res Res, err error) bool, opts ...Option) *Breaker[Req, Res] {
	if isnil.Is(inner) {
		panic("breaker.New: nil inner service")
	}
	if failure == nil {
		panic("breaker.New: nil failure classifier")
	}
	return newBreaker(inner, failure, newOptions("breaker.New", opts))
}

func newBreaker[Req, Res any](inner tower.Service[Req, Res], failure func(Res, error) bool, o options) *Breaker[Req, Res] {
	b := &Breaker[Req, Res]{inner: inner, failure: failure, opts: o}
	b.window = newWindow(&b.opts)
	b.cur.Store(&period[Req, Res]{b: b, state: Closed})
	if b.window != nil {
		b.window.reset(mono.Now())
	}
	return b
}

// NewLayer returns a Layer that wraps each service in a Breaker of its
// own, as [New] does, with failure and opts: the Breakers share what the
// options give (a budget, a sink, a callback) and nothing else, so that
// each endpoint of a balancer, wrapped in the layer, trips alone. It
// panics if failure or an option is nil; its Wrap panics if the service
// is nil.
func NewLayer[Req, Res any](failure func(res Res, err error) bool, opts ...Option) tower.Layer[Req, Res] {
	if failure == nil {
		panic("breaker.NewLayer: nil failure classifier")
	}
	o := newOptions("breaker.NewLayer", opts) // now, not when the layer is used
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		if isnil.Is(inner) {
			panic("breaker.NewLayer: nil inner service")
		}
		return newBreaker(inner, failure, o)
	})
}

// AnyError is a failure classifier for [New] that counts every error as
// a failure of the backend, but context.Canceled, and no response as
// one. Passed as it is, its type argument is inferred: New(inner,
// AnyError, ...).
//
// A call cancelled by its caller, who gave up or no longer needs the
// answer, says nothing of the backend: counting it would let a client
// that cancels a lot (a hedge whose twin won, a user who left) trip the
// breaker of a healthy backend. A call that ran out of time,
// context.DeadlineExceeded, is counted: a backend too slow to answer
// within the caller's deadline is failing that caller.
func AnyError[Res any](_ Res, err error) bool {
	return err != nil && !errors.Is(err, context.Canceled)
}

// State returns the breaker's state now. The change from open to
// half-open is made by the first Ready after the open delay has ended (a
// Ready waiting then is woken at that instant): until one comes, State
// reports Open.
func (b *Breaker[Req, Res]) State() State { return b.cur.Load().state }

// Ready waits until the breaker admits a request and the inner service is
// ready for it, as the type's doc describes, and returns the permit.
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

// Isolate opens the breaker until [Breaker.Reset]: Ready waits (with a
// done ctx, fails at once) whatever the inner service's health, and no
// probe goes. It is Polly's manual isolation, for an operator who knows
// better than the results. Isolating a breaker that is open already
// keeps it open until Reset.
func (b *Breaker[Req, Res]) Isolate() {
	b.do(func() bool {
		return b.set(&period[Req, Res]{b: b, state: Open, until: forever})
	})
}

// Reset closes the breaker, whatever its state, with its counts of
// failures and of trips started again: what a probe succeeding does, by
// hand. Calls admitted before have their results dropped, as a late
// result is.
func (b *Breaker[Req, Res]) Reset() {
	b.do(func() bool { return b.closeLocked() })
}
