package adaptive

import (
	"math"
	"math/rand/v2"

	"github.com/towergo/tower/internal/option"
)

// VegasOption configures [Vegas].
type VegasOption func(*vegas)

// VegasSmoothing sets how far each window moves the limit toward the one
// it computes (default 1, the whole way). It panics unless 0 < f <= 1.
func VegasSmoothing(f float64) VegasOption {
	option.PanicIf(!(f > 0 && f <= 1), "adaptive.VegasSmoothing: f must be above 0 and at most 1, got %v", f)
	return func(v *vegas) { v.smoothing = f }
}

// VegasProbe sets how often the no-load latency is measured afresh when
// nothing else calls for a probe: after multiplier·limit windows, jittered
// down to half that, at the first window after that whose load reached
// half the limit (default 30, Netflix's). It panics unless
// 1 <= multiplier <= 1000.
func VegasProbe(multiplier int) VegasOption {
	checkRange("adaptive.VegasProbe", "multiplier", float64(multiplier), 1, 1000)
	return func(v *vegas) { v.every = float64(multiplier) }
}

type vegas struct {
	noLoad
	smoothing, every float64
	windows          int     // since the last probe
	jitter           float64 // of the next periodic probe, in [0.5, 1)
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
// with callers blocked.
//
// The no-load latency comes from probes ([Prober]), as [Gradient2]'s
// baseline does, the queue above β standing for latency above the
// tolerance, and periodically ([VegasProbe]).
//
// It returns a constructor of fresh algorithms, and panics if an option is nil.
func Vegas(opts ...VegasOption) func() Algorithm {
	v := &vegas{smoothing: 1, every: 30}
	option.Onto("adaptive.Vegas", v, opts)
	return func() Algorithm {
		alg := *v
		alg.jitter = 0.5 + rand.Float64()/2
		alg.probe = true // the first window
		return &alg
	}
}

func (v *vegas) Update(limit float64, s Sample) float64 {
	v.windows++
	if s.Probe {
		v.windows, v.jitter = 0, 0.5+rand.Float64()/2
		v.probed()
	}
	v.probe = float64(v.windows) >= v.jitter*v.every*limit && !appLimited(limit, s.MaxInFlight)
	lg := log10Floor(limit)
	if s.Dropped > 0 {
		return v.smooth(limit, limit-lg)
	}
	if s.Timed == 0 {
		v.probe = v.probe || v.baseline == 0
		return limit
	}
	latency := algorithmLatency(s)
	if s.Probe || s.AtMin || v.baseline == 0 {
		loaded, first := v.measure(latency, s)
		switch {
		case loaded.limit == 0 && s.AtMin && !s.Probe:
			return v.move(limit, v.baseline, s.MaxInFlight, s.Blocked)
		case loaded.limit == 0 && first && startsOwnBound(s):
			return v.smooth(limit, limit+ownBoundGrowth*limit)
		case loaded.limit == 0:
			return limit
		case v.queue(loaded.limit, loaded.latency) > 6*log10Floor(loaded.limit):
			// Still queued beyond β against the probe: it falls now.
			return v.move(loaded.limit, loaded.latency, loaded.maxInFlight, 0)
		}
		return loaded.limit
	}
	if ownBound(s) {
		if appLimited(limit, s.MaxInFlight) {
			return limit
		}
		step := 6 * lg
		if s.Blocked > 0 {
			step = max(step, ownBoundGrowth*limit)
		}
		return v.smooth(limit, limit+step)
	}
	if next, ok := v.probeDue(limit, latency, v.queue(limit, latency) > 6*lg, s); ok {
		return next
	}
	return v.move(limit, latency, s.MaxInFlight, s.Blocked)
}

// queue is the queue Vegas estimates at limit for latency.
func (v *vegas) queue(limit, latency float64) float64 {
	return math.Ceil(limit*(1-v.baseline/latency) - epsilon)
}

// move returns the limit after a window of latency with at most
// maxInFlight in flight and blocked callers blocked at the limit.
func (v *vegas) move(limit, latency float64, maxInFlight, blocked int) float64 {
	if appLimited(limit, maxInFlight) {
		return limit
	}
	lg := log10Floor(limit)
	switch queue := v.queue(limit, latency); {
	case queue <= 0 && blocked > 0:
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

func (v *vegas) smooth(limit, next float64) float64 {
	return limit*(1-v.smoothing) + next*v.smoothing
}
