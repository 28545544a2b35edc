package adaptive_test

import (
	"fmt"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/adaptive"
)

type dbg struct {
	adaptive.Prober
	start time.Time
}

func (d *dbg) Update(limit float64, s adaptive.Sample) float64 {
	n := d.Prober.Update(limit, s)
	fmt.Printf("%8.3fs lim %6.2f -> %6.2f probe=%v next=%v timed=%d drop=%d mean=%v min=%v maxIF=%d blocked=%d el=%v own=%v\n",
		time.Since(d.start).Seconds(), limit, n, s.Probe, d.ProbeNext(), s.Timed, s.Dropped, s.MeanLatency, s.MinLatency, s.MaxInFlight, s.Blocked, s.Elapsed, s.OwnDelay)
	return n
}

func TestZZDebug(t *testing.T) {
	which := os.Getenv("ZZ")
	if which == "" {
		t.Skip()
	}
	alg := adaptive.Gradient2()
	if os.Getenv("ZZALG") == "vegas" {
		alg = adaptive.Vegas()
	}
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		w := func() adaptive.Algorithm { return &dbg{alg().(adaptive.Prober), start} }
		var stages []stage
		switch which {
		case "drop":
			stages = []stage{{10 * second, 8, ms10}, {20 * second, 2, ms10}, {time.Hour, 8, ms10}}
		case "slow":
			stages = []stage{{10 * second, 8, ms10}, {20 * second, 8, 4 * ms10}, {time.Hour, 8, ms10}}
		default:
			stages = []stage{{time.Hour, 8, ms10}}
		}
		overload(w, rate, 30*second, stages)
	})
}
