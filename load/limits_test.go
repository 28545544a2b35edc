package load_test

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/load"
	"github.com/towergo/tower/towertest"
)

// PeakEwma's durations at the extremes: MinInt64 and 0 are refused with a
// clear panic, by the constructor and the layer alike; MaxInt64 is a long
// time, and the estimate, a float64, holds it.
func TestPeakEwmaLimits(t *testing.T) {
	for _, tt := range []struct {
		name       string
		rtt, decay time.Duration
		want       string // the panic, if any
	}{
		{"RTTMin", math.MinInt64, time.Second, "defaultRTT must be positive, got -2562047h47m16.854775808s"},
		{"RTTZero", 0, time.Second, "defaultRTT must be positive, got 0s"},
		{"DecayMin", time.Millisecond, math.MinInt64, "decay must be positive, got -2562047h47m16.854775808s"},
		{"DecayZero", time.Millisecond, 0, "decay must be positive, got 0s"},
		{"RTTMax", math.MaxInt64, 10 * time.Second, ""},
		{"DecayMax", 30 * time.Millisecond, math.MaxInt64, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want != "" {
				towertest.Panics(t, "load.NewPeakEwma: "+tt.want, func() { load.NewPeakEwma[string, string](echo, tt.rtt, tt.decay) })
				towertest.Panics(t, "load.NewPeakEwmaLayer: "+tt.want, func() { load.NewPeakEwmaLayer[string, string](tt.rtt, tt.decay) })
				return
			}
			synctest.Test(t, func(t *testing.T) {
				p := load.NewPeakEwma[string, string](echo, tt.rtt, tt.decay)
				checkLoad(t, p, float64(tt.rtt))
				time.Sleep(time.Hour)
				// An hour without requests decays the estimate by
				// exp(-1h/decay): next to nothing with a decay of MaxInt64.
				checkLoad(t, p, float64(tt.rtt)*math.Exp(-float64(time.Hour)/float64(tt.decay)))
			})
		})
	}
}
