package steer

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
)

// ErrBadPick is the cause, in an [*Error], of a request whose picker
// returned an index that is not one of the services'.
var ErrBadPick = errors.New("picker returned an index out of range")

// An Error reports a request that could not be sent to the service its
// picker chose: Err is [ErrBadPick], or the error the broken service's
// Ready returned.
type Error struct {
	Index int   // the index the picker returned
	Err   error // the cause
}

// Error returns "steer: service <Index>: <Err>".
func (e *Error) Error() string { return fmt.Sprintf("steer: service %d: %v", e.Index, e.Err) }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// A Picker chooses the service for a request: it returns an index into the
// n services given to [New]. It must be safe for concurrent use.
type Picker[Req any] func(ctx context.Context, req Req, n int) int

// Steer is middleware that sends each request to the service its [Picker]
// chooses, as the package doc says. A Steer is safe for concurrent use.
// Its zero value is not usable; build one with [New].
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
	option.PanicIf(len(services) == 0, "steer.New: no services")
	for i, s := range services {
		option.PanicIf(isnil.Is(s), "steer.New: service %d is nil", i)
	}
	option.PanicIf(isnil.Is(pick), "steer.New: nil picker")
	return &Steer[Req, Res]{
		services: append([]tower.Service[Req, Res](nil), services...),
		broken:   make([]atomic.Pointer[Error], len(services)),
		pick:     pick,
	}
}

// Ready returns a permit at once, even if ctx is done; its Call waits.
func (s *Steer[Req, Res]) Ready(context.Context) (tower.Permit[Req, Res], error) {
	return s.wraps.Wrap((*wrapper[Req, Res])(s), tower.Permit[Req, Res]{}), nil
}

// wrapper is Steer's tower.Wrapper, kept off Steer's method set.
type wrapper[Req, Res any] Steer[Req, Res]

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
		if err == ctx.Err() {
			return zero, err
		}
		// The first failure recorded is the one every request reports.
		w.broken[i].CompareAndSwap(nil, &Error{Index: i, Err: err})
		return zero, w.broken[i].Load()
	}
	return p.Call(ctx, req)
}

func (w *wrapper[Req, Res]) ReleaseWrapped(tower.Permit[Req, Res]) {}

// Broken returns the [*Error] of service i if a request picked for it
// found it broken, or nil. It panics if i is out of range.
func (s *Steer[Req, Res]) Broken(i int) error {
	if e := s.broken[i].Load(); e != nil {
		return e
	}
	return nil
}
