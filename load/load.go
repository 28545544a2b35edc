package load

import (
	"context"
	"math"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
)

// A Service is a [tower.Service] that reports its load, so that a balancer
// can prefer the least loaded of its endpoints: tower's Load.
type Service[Req, Res any] interface {
	tower.Service[Req, Res]
	// Load returns the service's load now: the smaller, the less loaded.
	// It is safe for concurrent use, and may update the service's state
	// ([PeakEwma]'s estimate decays each time it is read).
	Load() float64
}

// Constant is a service whose load never changes: tower's Constant. Its
// Ready and permits are the inner service's own. A Constant is safe for
// concurrent use; make one with [NewConstant].
type Constant[Req, Res any] struct {
	inner tower.Service[Req, Res]
	load  float64
}

// NewConstant returns inner with a load of load. It panics if inner is nil
// (or holds a nil pointer) or load is NaN.
func NewConstant[Req, Res any](inner tower.Service[Req, Res], load float64) *Constant[Req, Res] {
	option.PanicIf(isnil.Is(inner), "load.NewConstant: inner is nil")
	option.PanicIf(math.IsNaN(load), "load.NewConstant: load is NaN")
	return &Constant[Req, Res]{inner: inner, load: load}
}

// NewConstantLayer returns a Layer that gives each service it wraps a
// constant load. It panics if load is NaN.
func NewConstantLayer[Req, Res any](load float64) tower.Layer[Req, Res] {
	option.PanicIf(math.IsNaN(load), "load.NewConstantLayer: load is NaN")
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return NewConstant(inner, load)
	})
}

// Ready is the inner service's Ready.
func (c *Constant[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	return c.inner.Ready(ctx)
}

// Load returns the constant load.
func (c *Constant[Req, Res]) Load() float64 { return c.load }
