package loadshed

import (
	"context"
	"errors"

	"github.com/towergo/tower"
)

// ErrOverloaded is the error of a request shed because the inner service was
// not ready. Its message is tower's, "service overloaded".
var ErrOverloaded = errors.New("service overloaded")

// LoadShed is middleware that never makes a caller wait. Ready asks the
// inner service whether it can take a request now (see [tower.ReadyNow]).
// If it can, the permit is the inner service's own. If it cannot, Ready
// still succeeds, and the permit's Call fails at once with ErrOverloaded
// without reaching the inner service, which has reserved nothing. An inner
// service that is broken fails Ready with its error.
//
// LoadShed sheds whenever the inner service is not ready at that instant,
// for whatever reason: it is meant to sit outside something that says "not
// ready" only when it is full, such as a concurrency limit.
//
// A LoadShed is safe for concurrent use. Its zero value is not usable; call
// [New]. Req and Res are the request and response types.
type LoadShed[Req, Res any] struct {
	inner tower.Service[Req, Res]
}

// New returns inner wrapped in a LoadShed. It panics if inner is nil.
func New[Req, Res any](inner tower.Service[Req, Res]) *LoadShed[Req, Res] {
	if inner == nil {
		panic("loadshed.New: nil inner service")
	}
	return &LoadShed[Req, Res]{inner: inner}
}

// NewLayer returns a Layer that wraps each service in a LoadShed. Its Wrap
// panics if the service is nil.
func NewLayer[Req, Res any]() tower.Layer[Req, Res] {
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return New(inner)
	})
}

// Ready returns at once, ignoring ctx: with the inner service's permit if it
// was ready, or with a permit that sheds the request if it was not.
func (l *LoadShed[Req, Res]) Ready(context.Context) (tower.Permit[Req, Res], error) {
	p, ok, err := tower.ReadyNow(l.inner)
	if err != nil || ok {
		return p, err
	}
	return tower.NewPermit[Req, Res](shed[Req, Res]{}, 0), nil
}

// shed serves the permits of requests that are shed. It holds nothing.
type shed[Req, Res any] struct{}

func (shed[Req, Res]) CallReserved(context.Context, uint64, Req) (Res, error) {
	var zero Res
	return zero, ErrOverloaded
}

func (shed[Req, Res]) ReleaseReserved(uint64) {}
