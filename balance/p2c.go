package balance

import (
	"context"

	"github.com/towergo/tower"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/load"
)

// P2C is a load balancer that sends each request to the less loaded of two
// ready endpoints drawn at random: the "power of two choices", tower's
// p2c::Balance. Each endpoint reports its load ([load.Service]).
//
// Ready picks among the ready endpoints: two distinct ones drawn with
// Floyd's sampling, the lower load winning and the first drawn on a tie.
// Loads are read with the balancer's lock held, so an endpoint's Load must
// be quick and must not call the balancer; a panic in Load or the Rand
// goes up to the caller of Ready, with the lock released and nothing
// taken. Ready returns the chosen endpoint's own permit (see the package
// doc). It fails only with ctx's error, or with ErrClosed once the
// balancer is closed: an endpoint that fails is dropped, never an error
// for the caller.
//
// A P2C is safe for concurrent use. The zero P2C is not usable; make one
// with [NewP2C], and Close it when done. K is the Discover's key type, Req
// and Res the request and response types.
type P2C[K comparable, Req, Res any] struct {
	b    balancer[K, Req, Res, load.Service[Req, Res]]
	rand Rand
}

// NewP2C returns a P2C over the endpoints d discovers. The changes d has
// now (all of a discover.List) are applied before it returns; a goroutine
// applies the rest. It panics if d or an option is nil.
func NewP2C[K comparable, Req, Res any](d discover.Discover[K, load.Service[Req, Res]], opts ...Option) *P2C[K, Req, Res] {
	p := &P2C[K, Req, Res]{}
	p.b.init("balance.NewP2C", d, (*p2cPicker[K, Req, Res])(p), opts)
	p.rand = p.b.o.rand
	return p
}

// Ready waits until an endpoint is ready, picks one by the power of two
// choices, and returns its permit, as the tower contract says for ctx.
// Built WithFailFast, a balancer with no endpoints returns at once a
// permit whose Call fails with ErrNoEndpoints.
func (p *P2C[K, Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	return p.b.ready(ctx)
}

// Len returns the number of endpoints, ready or not.
func (p *P2C[K, Req, Res]) Len() int { return p.b.cache.Len() }

// ReadyLen returns the number of endpoints ready now.
func (p *P2C[K, Req, Res]) ReadyLen() int { return p.b.cache.ReadyLen() }

// Close stops the discovery, releases the ready endpoints' reservations,
// and stops and waits for the balancer's goroutines, however long a
// Discover's Next or an endpoint's Ready takes to return. Ready fails with
// ErrClosed from then on; permits already returned stay good. Close is
// idempotent and returns nil.
func (p *P2C[K, Req, Res]) Close() error { return p.b.shutdown(context.Background()) }

// Shutdown does what Close does, but waits for the balancer's goroutines
// only as long as ctx lasts: it returns nil once they have all exited, or
// ctx.Err() if ctx ends first. Those still running are in a Discover's Next
// or an endpoint's Ready that ignores its cancelled context; each exits
// when that call returns, releasing the permit it got and handing any
// endpoint it got to the removal handler. Call Shutdown or Close again to
// wait for them. Whatever ctx says, the first call releases the ready
// endpoints' reservations and calls the removal handler for them on its
// own goroutine before it waits.
func (p *P2C[K, Req, Res]) Shutdown(ctx context.Context) error { return p.b.shutdown(ctx) }

// p2cPicker is P2C's readycache.Picker, kept off its method set.
type p2cPicker[K comparable, Req, Res any] P2C[K, Req, Res]

// Pick draws two distinct indexes with Floyd's sampling (tower's
// sample_floyd2) and returns the one with the lower load, the first on a
// tie. The cache's lock, held here, also guards rand.
func (p *p2cPicker[K, Req, Res]) Pick(ready []load.Service[Req, Res]) int {
	n := len(ready)
	if n == 1 {
		return 0
	}
	a := p.rand.IntN(n - 1)
	b := p.rand.IntN(n)
	if a == b {
		a = n - 1
	}
	if ready[a].Load() <= ready[b].Load() {
		return a
	}
	return b
}
