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

		{"Gradient2LongWindow(9)", func() { Gradient2LongWindow(9) }, "adaptive.Gradient2LongWindow: n must be between 10 and 100000, got 9"},
		{"Gradient2LongWindow(10)", func() { Gradient2LongWindow(10) }, ""},
		{"Gradient2LongWindow(100000)", func() { Gradient2LongWindow(100000) }, ""},
		{"Gradient2LongWindow(100001)", func() { Gradient2LongWindow(100001) }, "adaptive.Gradient2LongWindow: n must be between 10 and 100000, got 100001"},

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

// Gradient2 counts a window whose requests in flight reached exactly half
// the limit as unqueued, so that a slower one is averaged into the
// baseline, and not as app-limited, so that it moves the limit; one more
// in flight is queued, and leaves the baseline alone.
func TestGradient2HalfTheLimit(t *testing.T) {
	for _, c := range []struct {
		name     string
		s        Sample
		want     float64 // the limit after the window
		baseline float64
	}{
		{"as fast at half: headroom √20", sample(10*time.Millisecond, 10), 20 + 0.2*math.Sqrt(20), 10 * ms},
		{"slower at half: averaged in", sample(20*time.Millisecond, 10), 20, 15 * ms},
		{"slower above half: queued, gradient 0.75", sample(20*time.Millisecond, 11), 19, 10 * ms},
		{"below half: app-limited", sample(5*time.Millisecond, 9), 20, 7.5 * ms},
	} {
		g := newGradient2(nil)
		g.Update(20, sample(10*time.Millisecond, 20)) // baseline 10ms
		if got := g.Update(20, c.s); !near(got, c.want) {
			t.Errorf("%s: limit %v, want %v", c.name, got, c.want)
		}
		if g.baseline != c.baseline {
			t.Errorf("%s: baseline %v, want %v", c.name, time.Duration(g.baseline), time.Duration(c.baseline))
		}
	}
}

// Gradient2 adds the headroom to a window whose latency is at most 1+ε
// times the baseline: at exactly 1+ε (in float64) it still does. The
// baseline is set to make the ratio that exactly, of a queued window that
// leaves it alone.
func TestGradient2HeadroomAtEpsilon(t *testing.T) {
	short := 10000011.0 // ns, a whole number as a Duration is
	g := newGradient2(nil)
	g.n = warmup
	g.baseline = math.Nextafter(short/(1+epsilon), 0)
	if short/g.baseline != 1+epsilon || short <= g.baseline*(1+epsilon) {
		t.Fatalf("baseline %.17g: ratio %.17g, want 1+ε and a queued window that leaves it alone", g.baseline, short/g.baseline)
	}
	b := g.baseline
	if got, want := g.Update(20, sample(time.Duration(short), 20)), 20+0.2*math.Sqrt(20); !near(got, want) {
		t.Errorf("latency 1+ε times the baseline: limit %v, want %v (the headroom added)", got, want)
	}
	if g.baseline != b {
		t.Errorf("baseline %.17g, want it left at %.17g", g.baseline, b)
	}
	// A nanosecond slower: above 1+ε, no headroom.
	if got := g.Update(20, sample(time.Duration(short)+1, 20)); !near(got, 20) {
		t.Errorf("latency above 1+ε times the baseline: limit %v, want 20", got)
	}
}

// Gradient2 shrinks the baseline by 5% only when it is more than twice the
// window's latency: a baseline that averages down to exactly twice stays.
func TestGradient2RecoveryAtTwice(t *testing.T) {
	for _, c := range []struct {
		first time.Duration
		want  float64
	}{
		{30 * time.Millisecond, 20 * ms},        // (30+10)/2 = 20: twice 10, kept
		{40 * time.Millisecond, 25 * ms * 0.95}, // (40+10)/2 = 25: above twice, shrunk
	} {
		g := newGradient2(nil)
		g.Update(20, sample(c.first, 20))
		g.Update(20, sample(10*time.Millisecond, 20))
		if !near(g.baseline, c.want) {
			t.Errorf("baseline %v then a 10ms window: baseline %v, want %v", c.first, time.Duration(g.baseline), time.Duration(c.want))
		}
	}
}

// Vegas probes the no-load latency afresh once the windows since the last
// probe reach jitter·multiplier·limit: with jitter 0.5, multiplier 30 and
// limit 10, the 150th window is the probe and the 149th is not.
func TestVegasProbeAtWindow(t *testing.T) {
	for _, c := range []struct {
		before, windows int
		noLoad          float64
	}{
		{148, 149, 10 * ms}, // no probe: the slower window is not the no-load latency
		{149, 0, 20 * ms},   // the probe
	} {
		v := newVegas(nil)
		v.jitter, v.noLoad, v.windows = 0.5, 10*ms, c.before
		if got := v.Update(10, sample(20*time.Millisecond, 10)); got != 10 {
			t.Errorf("window %d: limit %v, want 10", c.before+1, got)
		}
		if v.windows != c.windows || v.noLoad != c.noLoad {
			t.Errorf("window %d: %d windows since the probe and no-load latency %v, want %d and %v",
				c.before+1, v.windows, time.Duration(v.noLoad), c.windows, time.Duration(c.noLoad))
		}
	}
}

// Vegas leaves the limit alone when the requests in flight stayed below
// half of it; at exactly half it moves it.
func TestVegasHalfTheLimit(t *testing.T) {
	for _, c := range []struct {
		inflight int
		want     float64
	}{
		{9, 20}, {10, 26},
	} {
		v := newVegas(nil)
		v.Update(20, sample(10*time.Millisecond, 20)) // the no-load latency
		if got := v.Update(20, sample(10*time.Millisecond, c.inflight)); got != c.want {
			t.Errorf("%d in flight at limit 20: limit %v, want %v", c.inflight, got, c.want)
		}
	}
}

// Vegas' queue is a whole number when limit·(1 − noLoad/latency) is one,
// though floats put it a hair above: at limit 20 (lg 1, β 6), 19ms over
// 20ms is a queue of 1, which adds β, and 14ms over 20ms is a queue of 6,
// which holds the limit.
func TestVegasQueueRounding(t *testing.T) {
	for _, c := range []struct {
		noLoad time.Duration
		want   float64
	}{
		{19 * time.Millisecond, 26},
		{14 * time.Millisecond, 20},
		{20 * time.Millisecond, 26}, // queue 0
	} {
		v := newVegas(nil)
		v.Update(20, sample(c.noLoad, 20))
		if got := v.Update(20, sample(20*time.Millisecond, 20)); got != c.want {
			t.Errorf("no-load latency %v, latency 20ms: limit %v, want %v", c.noLoad, got, c.want)
		}
	}
}

// VegasSmoothing(f) moves the limit a fraction f of the way to the one
// Vegas computes: with 0.5, halfway.
func TestVegasSmoothingHalfway(t *testing.T) {
	v := newVegas([]VegasOption{VegasSmoothing(0.5)})
	v.Update(20, sample(10*time.Millisecond, 20))
	if got := v.Update(20, sample(10*time.Millisecond, 20)); got != 23 {
		t.Errorf("no queue at limit 20: limit %v, want 23 (halfway to 26)", got)
	}
	if got := v.Update(20, Sample{Dropped: 1}); got != 19.5 {
		t.Errorf("drop at limit 20: limit %v, want 19.5 (halfway to 19)", got)
	}
}
