package adaptive

import (
	"math"
	"runtime"
	"sync"
	"testing"
	"time"
)

// A histogram's mean puts each count at its bucket's midpoint, and an open
// bucket's at its finite boundary.
func TestHistMean(t *testing.T) {
	inf := math.Inf(1)
	buckets := []float64{math.Inf(-1), 0, 1e-6, 3e-6, inf}
	for _, c := range []struct {
		counts []uint64
		want   float64
	}{
		{[]uint64{0, 0, 0, 0}, 0},
		{[]uint64{0, 2, 0, 0}, 0.5e-6},
		{[]uint64{0, 1, 1, 0}, (0.5e-6 + 2e-6) / 2},
		{[]uint64{4, 0, 0, 0}, 0},
		{[]uint64{0, 0, 0, 1}, 3e-6},
	} {
		if got := histMean(c.counts, buckets); math.Abs(got-c.want) > 1e-18 {
			t.Errorf("counts %v: mean %v, want %v", c.counts, got, c.want)
		}
	}
}

// SchedDelay reads the Go scheduler's latencies since its last reading:
// with more goroutines runnable than processors, a delay. (How long an
// idle process waits depends on the machine's other work, so only the
// busy case is asserted.)
func TestSchedDelay(t *testing.T) {
	busy := SchedDelay()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					runtime.Gosched()
				}
			}
		})
	}
	time.Sleep(100 * time.Millisecond)
	d := busy()
	close(stop)
	wg.Wait()
	if d <= 0 {
		t.Errorf("busy: %v, want a delay", d)
	}
}
