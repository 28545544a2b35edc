package adaptive

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// Each option accepts the values at its bounds and panics, naming itself,
// just beyond them (and on NaN, where the range is a float's).
func TestOptionBounds(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func()
		want string // the panic; "" if the value is accepted
	}{
		{"AIMDBackoff(0.5)", func() { AIMDBackoff(0.5) }, ""},
		{"AIMDBackoff(0.49)", func() { AIMDBackoff(0.49) }, "adaptive.AIMDBackoff: ratio must be at least 0.5 and below 1, got 0.49"},
		{"AIMDBackoff(0.99)", func() { AIMDBackoff(0.99) }, ""},
		{"AIMDBackoff(1)", func() { AIMDBackoff(1) }, "adaptive.AIMDBackoff: ratio must be at least 0.5 and below 1, got 1"},
		{"AIMDBackoff(NaN)", func() { AIMDBackoff(math.NaN()) }, "adaptive.AIMDBackoff: ratio must be at least 0.5 and below 1, got NaN"},

		{"Gradient2Smoothing(0)", func() { Gradient2Smoothing(0) }, "adaptive.Gradient2Smoothing: f must be above 0 and at most 1, got 0"},
		{"Gradient2Smoothing(0.01)", func() { Gradient2Smoothing(0.01) }, ""},
		{"Gradient2Smoothing(1)", func() { Gradient2Smoothing(1) }, ""},
		{"Gradient2Smoothing(1.01)", func() { Gradient2Smoothing(1.01) }, "adaptive.Gradient2Smoothing: f must be above 0 and at most 1, got 1.01"},
		{"Gradient2Smoothing(NaN)", func() { Gradient2Smoothing(math.NaN()) }, "adaptive.Gradient2Smoothing: f must be above 0 and at most 1, got NaN"},

		{"Gradient2Tolerance(0.99)", func() { Gradient2Tolerance(0.99) }, "adaptive.Gradient2Tolerance: tolerance must be between 1 and 10, got 0.99"},
		{"Gradient2Tolerance(1)", func() { Gradient2Tolerance(1) }, ""},
		{"Gradient2Tolerance(10)", func() { Gradient2Tolerance(10) }, ""},
		{"Gradient2Tolerance(10.01)", func() { Gradient2Tolerance(10.01) }, "adaptive.Gradient2Tolerance: tolerance must be between 1 and 10, got 10.01"},
		{"Gradient2Tolerance(NaN)", func() { Gradient2Tolerance(math.NaN()) }, "adaptive.Gradient2Tolerance: tolerance must be between 1 and 10, got NaN"},

		{"Gradient2QueueSize(0)", func() { Gradient2QueueSize(0) }, "adaptive.Gradient2QueueSize: n must be between 1 and 1000, got 0"},
		{"Gradient2QueueSize(1)", func() { Gradient2QueueSize(1) }, ""},
		{"Gradient2QueueSize(1000)", func() { Gradient2QueueSize(1000) }, ""},
		{"Gradient2QueueSize(1001)", func() { Gradient2QueueSize(1001) }, "adaptive.Gradient2QueueSize: n must be between 1 and 1000, got 1001"},

		{"Gradient2ProbeInterval(1s-1)", func() { Gradient2ProbeInterval(time.Second - 1) }, "adaptive.Gradient2ProbeInterval: d must be between 1s and 24h, got 999.999999ms"},
		{"Gradient2ProbeInterval(1s)", func() { Gradient2ProbeInterval(time.Second) }, ""},
		{"Gradient2ProbeInterval(24h)", func() { Gradient2ProbeInterval(24 * time.Hour) }, ""},
		{"Gradient2ProbeInterval(24h+1)", func() { Gradient2ProbeInterval(24*time.Hour + 1) }, "adaptive.Gradient2ProbeInterval: d must be between 1s and 24h, got 24h0m0.000000001s"},

		{"VegasSmoothing(0)", func() { VegasSmoothing(0) }, "adaptive.VegasSmoothing: f must be above 0 and at most 1, got 0"},
		{"VegasSmoothing(0.01)", func() { VegasSmoothing(0.01) }, ""},
		{"VegasSmoothing(0.5)", func() { VegasSmoothing(0.5) }, ""},
		{"VegasSmoothing(1)", func() { VegasSmoothing(1) }, ""},
		{"VegasSmoothing(1.01)", func() { VegasSmoothing(1.01) }, "adaptive.VegasSmoothing: f must be above 0 and at most 1, got 1.01"},
		{"VegasSmoothing(NaN)", func() { VegasSmoothing(math.NaN()) }, "adaptive.VegasSmoothing: f must be above 0 and at most 1, got NaN"},

		{"VegasProbe(0)", func() { VegasProbe(0) }, "adaptive.VegasProbe: multiplier must be between 1 and 1000, got 0"},
		{"VegasProbe(1)", func() { VegasProbe(1) }, ""},
		{"VegasProbe(1000)", func() { VegasProbe(1000) }, ""},
		{"VegasProbe(1001)", func() { VegasProbe(1001) }, "adaptive.VegasProbe: multiplier must be between 1 and 1000, got 1001"},

		{"WithReserve(-0.01)", func() { WithReserve(-0.01) }, "adaptive.WithReserve: fraction must be between 0 and 0.3, got -0.01"},
		{"WithReserve(0)", func() { WithReserve(0) }, ""},
		{"WithReserve(0.3)", func() { WithReserve(0.3) }, ""},
		{"WithReserve(0.31)", func() { WithReserve(0.31) }, "adaptive.WithReserve: fraction must be between 0 and 0.3, got 0.31"},

		{"WithBounds(0, 1)", func() { WithBounds(0, 1) }, fmt.Sprintf("adaptive.WithBounds: want 1 <= min <= max <= %d, got min 0 and max 1", MaxLimit)},
		{"WithBounds(1, 1)", func() { WithBounds(1, 1) }, ""},
		{"WithBounds(2, 1)", func() { WithBounds(2, 1) }, fmt.Sprintf("adaptive.WithBounds: want 1 <= min <= max <= %d, got min 2 and max 1", MaxLimit)},
		{"WithBounds(1, MaxLimit)", func() { WithBounds(1, MaxLimit) }, ""},
		{"WithBounds(MaxLimit, MaxLimit)", func() { WithBounds(MaxLimit, MaxLimit) }, ""},
		{"WithBounds(1, MaxLimit+1)", func() { WithBounds(1, MaxLimit+1) }, fmt.Sprintf("adaptive.WithBounds: want 1 <= min <= max <= %d, got min 1 and max %d", MaxLimit, MaxLimit+1)},

		{"WithInitial(0)", func() { WithInitial(0) }, fmt.Sprintf("adaptive.WithInitial: n must be between 1 and %d, got 0", MaxLimit)},
		{"WithInitial(1)", func() { WithInitial(1) }, ""},
		{"WithInitial(MaxLimit)", func() { WithInitial(MaxLimit) }, ""},
		{"WithInitial(MaxLimit+1)", func() { WithInitial(MaxLimit + 1) }, fmt.Sprintf("adaptive.WithInitial: n must be between 1 and %d, got %d", MaxLimit, MaxLimit+1)},
	} {
		got := func() (msg string) {
			defer func() {
				if r := recover(); r != nil {
					msg = fmt.Sprint(r)
				}
			}()
			c.f()
			return ""
		}()
		if got != c.want {
			t.Errorf("%s: panicked with %q, want %q", c.name, got, c.want)
		}
	}
}

// The options at their bounds take effect: the limiter's bounds and
// initial limit may be 1 and MaxLimit, and AIMD's backoff may be 0.5.
func TestOptionBoundsApply(t *testing.T) {
	o := newOptions("adaptive.New", []Option{WithBounds(1, MaxLimit), WithInitial(MaxLimit)})
	if o.min != 1 || o.max != MaxLimit || o.initial != MaxLimit {
		t.Errorf("bounds [%d, %d] and initial %d, want [1, %d] and %d", o.min, o.max, o.initial, MaxLimit, MaxLimit)
	}
	o = newOptions("adaptive.New", []Option{WithInitial(1)})
	if o.initial != 1 {
		t.Errorf("initial %d, want 1", o.initial)
	}
	if got := newAIMD([]AIMDOption{AIMDBackoff(0.5)}).Update(20, Sample{Dropped: 1}); got != 10 {
		t.Errorf("AIMDBackoff(0.5): a drop took the limit from 20 to %v, want 10", got)
	}
}

// WithReserve keeps the fraction in per mille, rounded to the nearest.
func TestWithReservePerMille(t *testing.T) {
	for _, c := range []struct {
		fraction float64
		want     int64
	}{
		{0, 0}, {0.0004, 0}, {0.0006, 1}, {0.0014, 1}, {0.0016, 2}, {0.1, 100}, {0.3, 300},
	} {
		if got := newOptions("adaptive.New", []Option{WithReserve(c.fraction)}).reserve; got != c.want {
			t.Errorf("WithReserve(%v): reserve %d per mille, want %d", c.fraction, got, c.want)
		}
	}
}
