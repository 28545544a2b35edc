package steer

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
)

// A Picker chooses the service for a request: it returns an index into the
// services given to [New], of which there are n. It gets the call's ctx, so
// it may route on values the caller put there as well as on the request.
// It must be safe for concurrent use, and should be quick: it runs on the
// request's path.
type Picker[Req any] func(ctx context.Context, req Req, n int) int

// Steer is middleware that sends each request to the service its [Picker]
// chooses. Ready reserves nothing; the permit's Call picks the service,
// waits for it under the call's ctx and calls it. A service whose Ready
// fails is broken for good, and every request picked for it fails with an
// [*Error] naming its index. See the package doc for why, and for where to
// put a Steer among other layers.
//
// A Steer is safe for concurrent use. Its zero value is not usable; build
// one with [New]. Req and Res are the request and response types of every
// service.
type Steer[Req, Res any] struct {
	services []tower.Service[Req, Res]
	broken   []atomic.Pointer[Error] // set once service i's Ready has failed
	pick     Picker[Req]
	wraps    tower.WrapPool[Req, Res]
}

// New returns a Steer over services, which pick chooses among. It keeps a
// copy of the slice. It panics if services is empty or holds a nil service
// (a typed nil too), or if pick is nil.
func New[Req, Res any](services []tower.Service[Req, Res], pick Picker[Req]) *Steer[Req, Res] {
	if len(services) == 0 {
		panic("steer.New: no services")
	}
	for i, s := range services {
		if isnil.Is(s) {
			panic(fmt.Sprintf("steer.New: service %d is nil", i))
		}
	}
	if isnil.Is(pick) {
		panic("steer.New: nil picker")
	}
	return &Steer[Req, Res]{
		services: append([]tower.Service[Req, Res](nil), services...),
		broken:   make([]atomic.Pointer[Error], len(services)),
		pick:     pick,
	}
}

// Ready returns a permit at once, even if ctx is done, and never fails: it
// reserves nothing, since the service depends on the request. The permit's
// Call does the waiting.
func (s *Steer[Req, Res]) Ready(context.Context) (tower.Permit[Req, Res], error) {
	// The zero permit holds nothing; the WrapPool's ticket refuses stale
	// copies.
	return s.wraps.Wrap((*wrapper[Req, Res])(s), tower.Permit[Req, Res]{}), nil
}

// wrapper is Steer's tower.Wrapper, kept off Steer's method set.
type wrapper[Req, Res any] Steer[Req, Res]

// CallWrapped picks the service for req, waits for it under ctx, and calls
// it. If ctx ends while it waits, it returns ctx.Err() unchanged and leaves
// nothing reserved.
func (w *wrapper[Req, Res]) CallWrapped(ctx context.Context, _ tower.Permit[Req, Res], req Req) (Res, error) {
	var zero Res
	i := w.pick(ctx, req, len(w.services))
	if i < 0 || i >= len(w.services) {
		return zero, &Error{Index: i, Err: ErrBadPick}
	}
	if e := w.broken[i].Load(); e != nil {
		return zero, e
	}
	p, err := w.services[i].Ready(ctx)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && err == cerr {
			return zero, err
		}
		// Broken for good: no request goes to it again. The first failure
		// recorded is the one every request reports.
		w.broken[i].CompareAndSwap(nil, &Error{Index: i, Err: err})
		return zero, w.broken[i].Load()
	}
	return p.Call(ctx, req)
}

// ReleaseWrapped has nothing to give back.
func (w *wrapper[Req, Res]) ReleaseWrapped(tower.Permit[Req, Res]) {}

// Broken returns the [*Error] of service i if it is broken: its Ready has
// failed, and no request is sent to it any more. It returns nil for a
// service not known to be broken; a service is found broken only by a
// request picked for it. It panics if i is out of range.
func (s *Steer[Req, Res]) Broken(i int) error {
	if e := s.broken[i].Load(); e != nil {
		return e
	}
	return nil
}
