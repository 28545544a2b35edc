package balance

import (
	"github.com/towergo/tower"
	"github.com/towergo/tower/discover"
)

// RoundRobin is a load balancer that sends requests to its ready endpoints
// in turn, ignoring how loaded or slow each is; everything else is as for
// [P2C]. The turn goes round the ready endpoints in the ready cache's
// order: one that is not ready is skipped, and one that becomes ready
// again joins at the end, so the rotation is approximate.
//
// A RoundRobin is safe for concurrent use. The zero RoundRobin is not
// usable; make one with [NewRoundRobin], and Close it when done. K is the
// Discover's key type, Req and Res the request and response types.
type RoundRobin[K comparable, Req, Res any] struct {
	balancer[K, Req, Res, tower.Service[Req, Res]]
	next uint // guarded by the cache's lock
}

// NewRoundRobin returns a RoundRobin over the endpoints d discovers. The
// changes d has now are applied before it returns; a goroutine applies the
// rest. It panics if d or an option is nil.
func NewRoundRobin[K comparable, Req, Res any](d discover.Discover[K, tower.Service[Req, Res]], opts ...Option) *RoundRobin[K, Req, Res] {
	r := &RoundRobin[K, Req, Res]{}
	r.init("balance.NewRoundRobin", d, (*rrPicker[K, Req, Res])(r), opts)
	return r
}

// rrPicker is RoundRobin's readycache.Picker, kept off its method set.
type rrPicker[K comparable, Req, Res any] RoundRobin[K, Req, Res]

func (r *rrPicker[K, Req, Res]) Pick(ready []tower.Service[Req, Res]) int {
	i := int(r.next % uint(len(ready)))
	r.next++
	return i
}
