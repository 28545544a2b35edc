package adaptive

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// VegasOption configures [Vegas].
type VegasOption func(*vegas)

// VegasSmoothing sets how far each window moves the limit toward the one
// it computes: between 0 (excluded) and 1. The default is 1, Netflix's.
func VegasSmoothing(f float64) VegasOption {
	if !(f > 0 && f <= 1) {
		panic(fmt.Sprintf("adaptive.VegasSmoothing: f must be above 0 and at most 1, got %v", f))
	}
	return func(v *vegas) { v.smoothing = f }
}

// VegasProbe sets how often the no-load latency is measured afresh: after
// about multiplier·limit windows, jittered between half that and all of
// it. It must be between 1 and 1000; the default is 30, Netflix's.
func VegasProbe(multiplier int) VegasOption {
	checkRange("adaptive.VegasProbe", "multiplier", float64(multiplier), 1, 1000)
	return func(v *vegas) { v.probe = float64(multiplier) }
}

type vegas struct {
	smoothing, probe float64
	noLoad           float64 // least mean latency seen since the last probe, in ns; 0: none yet
	windows          int     // since the last probe
	jitter           float64 // of the next probe, in [0.5, 1)
}

// Vegas is the delay-based algorithm of Netflix's VegasLimit, after
// TCP Vegas. It estimates the queue behind the limit from how far the
// window's mean latency is above the no-load latency (the least seen),
//
//	queue = ceil(limit·(1 − noLoad/latency))
//
// and with lg = max(1, ⌊log10(limit)⌋), α = 3·lg and β = 6·lg, it adds β to
// the limit while queue <= lg, adds lg while queue < α, takes lg away once
// queue > β, and holds it in between. A window with a drop takes lg away.
// A window whose requests in flight never reached half the limit leaves it
// alone.
//
// Every multiplier·limit windows or so (jittered, so that instances do not
// probe together) it takes the window's latency as the no-load latency
// afresh, so that a service that became slower for good is measured anew.
// Unlike Envoy's minimum-RTT measurement (envoy issue 8337), the probe
// never pins the limit low: callers see no refusals from it.
//
// Defaults: smoothing 1, probe multiplier 30, as Netflix's. It returns the function that [New] and [NewLayer] take, which makes
// a fresh one, with these settings and no state, each time it is called.
// It panics if an option is nil.
func Vegas(opts ...VegasOption) func() Algorithm {
	template := newVegas(opts)
	return func() Algorithm {
		alg := *template
		return &alg
	}
}

// newVegas returns the algorithm with opts, for Vegas.
func newVegas(opts []VegasOption) *vegas {
	v := &vegas{smoothing: 1, probe: 30}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("adaptive.Vegas: option %d is nil", i))
		}
		o(v)
	}
	v.jitter = 0.5 + rand.Float64()/2
	return v
}

func (v *vegas) Update(limit float64, s Sample) float64 {
	lg := log10Floor(limit)
	if s.Dropped > 0 {
		return v.smooth(limit, limit-lg)
	}
	if s.Timed == 0 {
		return limit
	}
	rtt := float64(s.MeanLatency)
	v.windows++
	if float64(v.windows) >= v.jitter*v.probe*limit {
		v.windows, v.jitter = 0, 0.5+rand.Float64()/2
		v.noLoad = rtt
		return limit
	}
	if v.noLoad == 0 || rtt < v.noLoad {
		v.noLoad = rtt
		return limit
	}
	if 2*float64(s.MaxInFlight) < limit {
		return limit
	}
	queue := math.Ceil(limit*(1-v.noLoad/rtt) - epsilon)
	if queue <= lg {
		return v.smooth(limit, limit+6*lg)
	}
	if queue < 3*lg {
		return v.smooth(limit, limit+lg)
	}
	if queue > 6*lg {
		return v.smooth(limit, limit-lg)
	}
	return limit
}

func (v *vegas) smooth(limit, next float64) float64 {
	return limit*(1-v.smoothing) + next*v.smoothing
}
