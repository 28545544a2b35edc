package balance

import (
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/load"
)

// P2C is a load balancer that sends each request to the less loaded of two
// ready endpoints drawn at random: the "power of two choices", tower's
// p2c::Balance. Each endpoint reports its load ([load.Service]). Ready
// draws two distinct ready endpoints with Floyd's sampling, and takes the
// one with the lower load, the first drawn on a tie. Loads are read with
// the balancer's lock held, so Load must be quick and must not call the
// balancer.
//
// A P2C is safe for concurrent use. The zero P2C is not usable; make one
// with [NewP2C], and Close it when done. K is the Discover's key type, Req
// and Res the request and response types.
type P2C[K comparable, Req, Res any] struct {
	balancer[K, Req, Res, load.Service[Req, Res]]
}

// NewP2C returns a P2C over the endpoints d discovers. The changes d has
// now (all of a discover.List) are applied before it returns; a goroutine
// applies the rest. It panics if d or an option is nil.
func NewP2C[K comparable, Req, Res any](d discover.Discover[K, load.Service[Req, Res]], opts ...Option) *P2C[K, Req, Res] {
	p := &P2C[K, Req, Res]{}
	p.init("balance.NewP2C", d, (*p2cPicker[K, Req, Res])(p), opts)
	return p
}

// p2cPicker is P2C's readycache.Picker, kept off its method set.
type p2cPicker[K comparable, Req, Res any] P2C[K, Req, Res]

// Pick is tower's sample_floyd2. The cache's lock, held here, also guards
// rand.
func (p *p2cPicker[K, Req, Res]) Pick(ready []load.Service[Req, Res]) int {
	n := len(ready)
	if n == 1 {
		return 0
	}
	a := p.o.rand.IntN(n - 1)
	b := p.o.rand.IntN(n)
	if a == b {
		a = n - 1
	}
	if ready[a].Load() <= ready[b].Load() {
		return a
	}
	return b
}
