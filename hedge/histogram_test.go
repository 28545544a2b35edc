package hedge_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/hedge"
)

func newHistogram(ms ...uint64) *hedge.Histogram {
	h := new(hedge.Histogram)
	for _, v := range ms {
		h.Record(v)
	}
	return h
}

// HdrHistogram's rule: the highest value of the first slot at which the
// count reaches ⌈q·n⌉, at least 1; the lowest for q = 0.
func TestHistogramQuantile(t *testing.T) {
	hundred := make([]uint64, 100)
	for i := range hundred {
		hundred[i] = uint64(i + 1)
	}
	tests := []struct {
		ms   []uint64
		q    float64
		want uint64
	}{
		{nil, 0.9, 0},
		{[]uint64{1, 1, 1, 1, 1, 1, 1, 1, 10, 10}, 0.9, 10}, // tower's hedge tests
		{[]uint64{1, 1, 1, 1, 1, 1, 1, 1, 10, 10}, 0.8, 1},
		{[]uint64{1, 1, 1, 1, 1, 1, 1, 1, 10, 10}, 0, 1},
		{[]uint64{1, 1, 1, 1, 1, 1, 1, 1, 10, 10}, 1, 10},
		{[]uint64{3, 7, 9}, 0.5, 7},
		{[]uint64{3, 7, 9}, 0.01, 3},
		{hundred, 0.9, 90}, // 0.9·100 is a hair above 90 in floating point
		{hundred, 0.99, 99},
		{hundred, 0.999, 100},
		{hundred, 0.901, 91},
		{[]uint64{0, 0, 5}, 0.5, 0},
		{[]uint64{2047, 2048, 2049}, 0.5, 2049}, // 2048 and 2049 share a slot
		{[]uint64{2047, 2048, 2049}, 0.34, 2049},
		{[]uint64{2047, 2048, 2049}, 0.33, 2047},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v@%v", tt.ms, tt.q), func(t *testing.T) {
			if got := newHistogram(tt.ms...).Quantile(tt.q); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

// Latencies below 2048ms are exact; above, up to one hour and beyond, a
// latency is reported at most 0.1% above what was recorded: 3 significant
// digits.
func TestHistogramPrecision(t *testing.T) {
	for v := range uint64(2048) {
		if lo, hi := hedge.Bounds(v); lo != v || hi != v {
			t.Fatalf("Bounds(%d) = %d, %d; want exact", v, lo, hi)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	values := []uint64{2048, 2049, 4095, 4096, 999_999, 1_000_000, 3_600_000, hedge.MaxLatency}
	for range 3000 {
		values = append(values, 2048+r.Uint64N(hedge.MaxLatency-2048))
	}
	h := new(hedge.Histogram)
	for _, v := range values {
		lo, hi := hedge.Bounds(v)
		if lo > v || hi < v {
			t.Fatalf("Bounds(%d) = %d, %d; want them around it", v, lo, hi)
		}
		if err := float64(hi-v) / float64(v); err >= 0.001 {
			t.Fatalf("Bounds(%d): highest %d is %.5f%% above, want less than 0.1%%", v, hi, 100*err)
		}
		h.Clear()
		h.Record(v)
		if got := h.Quantile(0.5); got != hi {
			t.Fatalf("one latency of %d: got quantile %d, want %d", v, got, hi)
		}
	}
}

// Latencies beyond the range count as its maximum.
func TestHistogramBeyondRange(t *testing.T) {
	h := newHistogram(10 * 3_600_000)
	if got := h.Quantile(1); got != hedge.MaxLatency {
		t.Errorf("got %d, want %d", got, hedge.MaxLatency)
	}
}

// Recording allocates only the first time a range is used, and never
// more than the ranges there are.
func TestHistogramMemory(t *testing.T) {
	h := newHistogram(1, 50, 2047)
	if got := h.Allocated(); got != 1 {
		t.Errorf("latencies below 2048ms: %d ranges allocated, want 1", got)
	}
	h.Record(3_600_000)
	if got := h.Allocated(); got != 2 {
		t.Errorf("and one of 1h: %d ranges allocated, want 2", got)
	}
	if allocs := testing.AllocsPerRun(100, func() { h.Record(3_599_000); h.Record(7) }); allocs != 0 {
		t.Errorf("recording in allocated ranges: %v allocations, want 0", allocs)
	}
	h.Clear()
	if h.Total() != 0 || h.Quantile(0.5) != 0 {
		t.Errorf("after Clear: total %d, quantile %d; want 0, 0", h.Total(), h.Quantile(0.5))
	}
	for v := uint64(1); v <= hedge.MaxLatency; v *= 2 {
		h.Record(v)
	}
	if got := h.Allocated(); got != 12 {
		t.Errorf("every range used: %d ranges allocated, want 12", got)
	}
}

func checkTotals(t *testing.T, r *hedge.Rotating, read, write uint64) {
	t.Helper()
	if gr, gw := r.Totals(); gr != read || gw != write {
		t.Errorf("at %v: got %d read and %d written latencies, want %d and %d", time.Now().UTC().Format("05.000"), gr, gw, read, write)
	}
}

// tower's rotation: reads come from the previous full period; after one
// period the histograms swap and the new write one is cleared; after two
// or more, both are cleared; the rotation time moves on by whole periods.
func TestRotatingHistogram(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := hedge.NewRotating(time.Second, 0.5)
		r.Record(5 * time.Millisecond)
		if _, ok := r.Delay(1); ok {
			t.Error("at 0s: a delay from the current period, want none until it has passed")
		}
		checkTotals(t, r, 0, 1)
		time.Sleep(999 * time.Millisecond)
		checkTotals(t, r, 0, 1)
		time.Sleep(time.Millisecond) // 1s: one rotation
		if d, ok := r.Delay(1); !ok || d != 5*time.Millisecond {
			t.Errorf("at 1s: got %v, %t; want 5ms, true", d, ok)
		}
		checkTotals(t, r, 1, 0)
		r.Record(7 * time.Millisecond)
		time.Sleep(1500 * time.Millisecond) // 2.5s: one rotation, at 2s
		if d, ok := r.Delay(1); !ok || d != 7*time.Millisecond {
			t.Errorf("at 2.5s: got %v, %t; want 7ms, true", d, ok)
		}
		r.Record(9 * time.Millisecond)
		time.Sleep(2 * time.Second) // 4.5s: two rotations since 2s: both cleared
		checkTotals(t, r, 0, 0)
		r.Record(11 * time.Millisecond) // in the period that started at 4s
		time.Sleep(500 * time.Millisecond)
		if d, ok := r.Delay(1); !ok || d != 11*time.Millisecond {
			t.Errorf("at 5s: got %v, %t; want 11ms, true", d, ok)
		}
	})
}

// Latencies are recorded in milliseconds, rounded up.
func TestRotatingRoundsUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, tt := range []struct {
			d    time.Duration
			want time.Duration
		}{
			{0, 0},
			{time.Nanosecond, time.Millisecond},
			{time.Millisecond, time.Millisecond},
			{1200 * time.Microsecond, 2 * time.Millisecond},
			{3 * time.Millisecond, 3 * time.Millisecond},
		} {
			r := hedge.NewRotating(time.Second, 1)
			r.Record(tt.d)
			time.Sleep(time.Second)
			if got, _ := r.Delay(1); got != tt.want {
				t.Errorf("recorded %v: got %v, want %v", tt.d, got, tt.want)
			}
		}
	})
}

// The minimum number of data points applies to the read histogram.
func TestRotatingMinDataPoints(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := hedge.NewRotating(time.Second, 0.5)
		r.Preload(4, 4)
		if _, ok := r.Delay(3); ok {
			t.Error("2 latencies, 3 wanted: got a delay, want none")
		}
		r.Preload(8)
		if d, ok := r.Delay(3); !ok || d != 4*time.Millisecond {
			t.Errorf("3 latencies: got %v, %t; want 4ms, true", d, ok)
		}
	})
}

func BenchmarkHistogramRecord(b *testing.B) {
	h := newHistogram(1, 100_000)
	b.ReportAllocs()
	v := uint64(0)
	for b.Loop() {
		v = (v*7 + 13) % 100_000
		h.Record(v)
	}
}

// The histogram's layout: 2048 exact slots for 0 to 2047ms, then 1024 for
// each power of two above, up to 2²²-1ms (about 70 minutes).
func TestHistogramLayout(t *testing.T) {
	if hedge.MaxLatency != 1<<22-1 {
		t.Errorf("MaxLatency = %d, want %d", hedge.MaxLatency, 1<<22-1)
	}
	for _, tt := range []struct{ v, lo, hi uint64 }{
		{2047, 2047, 2047},
		{2048, 2048, 2049},
		{4095, 4094, 4095},
		{4096, 4096, 4099},
		{1<<22 - 1, 1<<22 - 1<<11, 1<<22 - 1},
	} {
		if lo, hi := hedge.Bounds(tt.v); lo != tt.lo || hi != tt.hi {
			t.Errorf("Bounds(%d) = %d, %d; want %d, %d", tt.v, lo, hi, tt.lo, tt.hi)
		}
	}
}
