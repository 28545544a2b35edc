package adaptive

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// VegasOption configures [Vegas].
type VegasOption func(*vegas)

// VegasSmoothing sets how far each window moves the limit toward the one
// it computes (default 1, the whole way). It panics unless 0 < f <= 1.
func VegasSmoothing(f float64) VegasOption {
	if !(f > 0 && f <= 1) {
		panic(fmt.Sprintf("adaptive.VegasSmoothing: f must be above 0 and at most 1, got %v", f))
	}
	return func(v *vegas) { v.smoothing = f }
}

// VegasProbe sets how often the no-load latency is measured afresh when
// nothing else calls for a probe: after multiplier·limit windows, jittered
// down to half that (default 30, Netflix's). It panics unless
// 1 <= multiplier <= 1000.
func VegasProbe(multiplier int) VegasOption {
	checkRange("adaptive.VegasProbe", "multiplier", float64(multiplier), 1, 1000)
	return func(v *vegas) { v.every = float64(multiplier) }
}

type vegas struct {
	smoothing, every float64
	noLoad           float64 // the dependency's no-load latency, in ns; 0: none yet
	windows          int     // since the last probe
	jitter           float64 // of the next periodic probe, in [0.5, 1)
	trigger          trigger
	probe            bool // the next window is to be a probe
	loaded           loadedWindow
}

// Vegas is the delay-based algorithm of Netflix's VegasLimit, after TCP
// Vegas. It estimates the queue from how far the dependency's latency
// (less the process's own delay) is above its no-load latency,
//
//	queue = ceil(limit·(1 − noLoad/latency))
//
// and with lg = max(1, ⌊log10(limit)⌋), α = 3·lg and β = 6·lg, it adds β to
// the limit while queue <= lg, adds lg while queue < α, holds up to β, and
// beyond β falls at once to where the queue is β (Netflix's takes lg away
// a window). A drop takes lg away. With no queue and callers blocked at
// the limit, it doubles if that adds more than β: a slow start. When the
// process's own delay is most of the latency, it grows by β, or fourfold
// with callers blocked. A window whose requests in flight never reached
// half the limit leaves it alone.
//
// The no-load latency comes from probes (see [Prober]): at the start, when
// the queue stays above β for 3 windows or latency jumps past 3 times the
// no-load latency (at most once in 5 windows), when a window is 20% faster
// than it, and periodically ([VegasProbe]), jittered so that instances do
// not probe together, once a window's load reaches half the limit.
//
// It returns the function that [New] and [NewLayer] take, which makes a
// fresh algorithm with these settings each time it is called. It panics if
// an option is nil.
func Vegas(opts ...VegasOption) func() Algorithm {
	template := newVegas(opts)
	return func() Algorithm {
		alg := *template
		alg.jitter = 0.5 + rand.Float64()/2
		alg.probe = true // the first window
		return &alg
	}
}

func newVegas(opts []VegasOption) *vegas {
	v := &vegas{smoothing: 1, every: 30}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("adaptive.Vegas: option %d is nil", i))
		}
		o(v)
	}
	return v
}

func (v *vegas) Update(limit float64, s Sample) float64 {
	v.windows++
	if s.Probe {
		v.windows, v.jitter = 0, 0.5+rand.Float64()/2
		v.trigger.probed()
	}
	// A periodic probe waits for a window that reached half the limit, as
	// Gradient2's does.
	v.probe = float64(v.windows) >= v.jitter*v.every*limit && !appLimited(limit, s.MaxInFlight)
	lg := log10Floor(limit)
	if s.Dropped > 0 {
		return v.smooth(limit, limit-lg)
	}
	if s.Timed == 0 {
		v.probe = v.probe || v.noLoad == 0
		return limit
	}
	latency := algorithmLatency(s)
	if s.Probe || s.AtMin || v.noLoad == 0 {
		// As Gradient2: the no-load latency, unless the process held it;
		// the loaded window that called for a probe is judged now.
		first := v.noLoad == 0
		if first || !ownBound(s) {
			v.noLoad = max(latency, 1)
		}
		loaded := v.loaded
		v.loaded = loadedWindow{}
		if loaded.limit == 0 {
			if s.AtMin && !s.Probe {
				// At the floor, as Gradient2.
				return v.move(limit, v.noLoad, s.MaxInFlight, s.Blocked)
			}
			if first && startsOwnBound(s) {
				return v.smooth(limit, limit+ownBoundGrowth*limit)
			}
			return limit
		}
		if lg := log10Floor(loaded.limit); math.Ceil(loaded.limit*(1-v.noLoad/loaded.latency)-epsilon) > 6*lg {
			// Still queued beyond β against the probe: it falls now.
			return v.move(loaded.limit, loaded.latency, loaded.maxInFlight, 0)
		}
		return loaded.limit
	}
	if ownBound(s) {
		// As Gradient2: the process is the bottleneck, not the dependency.
		if appLimited(limit, s.MaxInFlight) {
			return limit
		}
		step := 6 * lg
		if s.Blocked > 0 {
			step = max(step, ownBoundGrowth*limit)
		}
		return v.smooth(limit, limit+step)
	}
	queue := math.Ceil(limit*(1-v.noLoad/latency) - epsilon)
	if v.trigger.window(queue > 6*lg, latency > jumpRatio*v.noLoad) {
		// Probe before moving, as Gradient2 does.
		v.probe = true
		v.loaded = loadedWindow{latency, s.MaxInFlight, limit}
		if latency > jumpRatio*v.noLoad {
			return limit * v.noLoad / latency
		}
		return limit
	}
	if latency <= fasterRatio*v.noLoad {
		v.probe = true
		return limit
	}
	return v.move(limit, latency, s.MaxInFlight, s.Blocked)
}

// move returns the limit after a window of latency with at most
// maxInFlight in flight and blocked callers blocked at the limit.
func (v *vegas) move(limit, latency float64, maxInFlight, blocked int) float64 {
	if appLimited(limit, maxInFlight) {
		return limit
	}
	lg := log10Floor(limit)
	queue := math.Ceil(limit*(1-v.noLoad/latency) - epsilon)
	switch {
	case queue <= 0 && blocked > 0:
		// A slow start, as Gradient2's.
		return v.smooth(limit, limit+max(6*lg, limit))
	case queue <= lg:
		return v.smooth(limit, limit+6*lg)
	case queue < 3*lg:
		return v.smooth(limit, limit+lg)
	case queue > 6*lg:
		return v.smooth(limit, limit-(queue-6*lg))
	}
	return limit
}

func (v *vegas) ProbeNext() bool { return v.probe }

func (v *vegas) smooth(limit, next float64) float64 {
	return limit*(1-v.smoothing) + next*v.smoothing
}
