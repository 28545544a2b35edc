package adaptive

import (
	"math"
	"testing"
	"time"
)

// A window at the limiter's lower bound re-anchors the no-load latency and
// is no queueing: with callers blocked it grows the limit as any such
// window does, doubling unless latency last rose above the tolerance at a
// higher limit. A limit driven to its floor by a jump would otherwise
// stay there for good.
func TestAtMinGrows(t *testing.T) {
	s := blocked(12*time.Millisecond, 4)
	s.AtMin = true
	g := primed()
	if got := g.Update(4, s); !near(got, 8) || g.baseline != 12*ms {
		t.Errorf("Gradient2 at its floor of 4, blocked: limit %v, baseline %v; want 8 and 12ms", got, time.Duration(g.baseline))
	}
	g = primed()
	g.queued = 20
	if got := g.Update(4, s); !near(got, 6) {
		t.Errorf("Gradient2 at its floor of 4, blocked, queued last at 20: limit %v, want 4+√4", got)
	}
	s.Blocked = 0
	if got := primed().Update(4, s); !near(got, 6) {
		t.Errorf("Gradient2 at its floor of 4, nobody blocked: limit %v, want 4+√4", got)
	}

	v := Vegas()().(*vegas)
	v.Update(20, probe(10*time.Millisecond))
	s = blocked(12*time.Millisecond, 20)
	s.AtMin = true
	if got := v.Update(20, s); !near(got, 40) || v.baseline != 12*ms {
		t.Errorf("Vegas at its floor of 20, blocked: limit %v, no-load latency %v; want 40 and 12ms", got, time.Duration(v.baseline))
	}
}

// A probe whose latency the process's own delay was most of measures the
// process, not the dependency: the baseline stays, and the loaded window
// that called for the probe is judged against it. The first baseline,
// with none to keep, is the dependency's most: half the mean.
func TestOwnBoundProbeKeepsBaseline(t *testing.T) {
	own := func(mean, ownDelay time.Duration) Sample {
		s := probe(mean)
		s.OwnDelay = ownDelay
		return s
	}
	g := primed()
	if got := g.Update(20, sample(40*time.Millisecond, 20)); !near(got, 5) || !g.ProbeNext() {
		t.Fatalf("Gradient2, 4 times slower: limit %v, probe next %v; want 5 and a probe", got, g.ProbeNext())
	}
	if got := g.Update(5, own(2*time.Millisecond, 2*time.Millisecond)); !near(got, 7.5) || g.baseline != 10*ms {
		t.Errorf("Gradient2, a probe all own delay: limit %v, baseline %v; want 20·1.5/4 and 10ms kept", got, time.Duration(g.baseline))
	}
	g = newGradient2(nil)
	g.Update(20, own(4*time.Millisecond, 3*time.Millisecond))
	if g.baseline != 2*ms {
		t.Errorf("Gradient2's first probe, 3ms of 4ms own: baseline %v, want 2ms", time.Duration(g.baseline))
	}

	v := Vegas()().(*vegas)
	v.Update(20, probe(10*time.Millisecond))
	v.cooldown = 0
	v.Update(20, sample(40*time.Millisecond, 20))
	if got := v.Update(5, own(2*time.Millisecond, 2*time.Millisecond)); v.baseline != 10*ms || !near(got, 11) {
		// 40ms against 10ms: a queue of 15 beyond β = 6, so 20 − 9.
		t.Errorf("Vegas, a probe all own delay: limit %v, no-load latency %v; want 11 and 10ms kept", got, time.Duration(v.baseline))
	}
}

// Whether the load held a window back is judged against the limit in
// force: at 2.4, whose 2 places leave normal priority 1 (the other is the
// reserve's), one in flight is half of it, and the limit moves.
func TestAppLimitedAgainstLimitInForce(t *testing.T) {
	if got := primed().Update(2.4, sample(10*time.Millisecond, 1)); !near(got, 2.4+math.Sqrt(2.4)) {
		t.Errorf("limit 2.4, 1 in flight, no queueing: limit %v, want 2.4+√2.4", got)
	}
	if got := primed().Update(3.4, sample(10*time.Millisecond, 1)); !near(got, 3.4) {
		t.Errorf("limit 3.4, 1 in flight: limit %v, want it held", got)
	}
}

// Latency below a millisecond is taken as a millisecond: a dependency
// that answers in 100µs with nothing in flight and in 800µs under load is
// not queueing; at 2ms it is, twice the floor.
func TestLatencyFloor(t *testing.T) {
	g := newGradient2(nil)
	g.nextProbe = time.Hour
	g.Update(20, probe(100*time.Microsecond))
	g.cooldown = 0
	if got := g.Update(20, sample(800*time.Microsecond, 20)); !near(got, 20+math.Sqrt(20)) || g.ProbeNext() {
		t.Errorf("Gradient2, 100µs then 800µs: limit %v, probe next %v; want +√20, no probe", got, g.ProbeNext())
	}
	if got := g.Update(20, sample(2*time.Millisecond, 20)); !near(got, 15) {
		t.Errorf("Gradient2, then 2ms: limit %v, want 20·1.5/2", got)
	}

	v := Vegas()().(*vegas)
	v.Update(20, probe(100*time.Microsecond))
	if got := v.Update(20, sample(900*time.Microsecond, 20)); !near(got, 26) {
		t.Errorf("Vegas, 100µs then 900µs: limit %v, want 20+β", got)
	}
	if got := v.Update(20, sample(2*time.Millisecond, 20)); !near(got, 16) {
		t.Errorf("Vegas, then 2ms: limit %v, want 20 less the queue of 10 beyond β", got)
	}
}

// batching is a fast dependency on the caller's own machine: 100µs alone,
// and 10µs more for each call in flight beside it, while the calls it
// completes a second grow with them (n/latency: 9,000 at 1 in flight,
// 50,000 at 50).
func batching(_ int, n float64) float64 { return 100e3 + 10e3*n }

// Under more demand than it can take, such a dependency is held to
// latencies of about a millisecond, not to 1.5 times its 100µs (a limit of
// 12, at a quarter of the rate it can serve): Gradient2 grows to 101, at
// 1.1ms, Vegas to 93, at 1.03ms, each within 17 windows, and they stay.
func TestFastDependencyNotHeldBack(t *testing.T) {
	for _, c := range []struct {
		name string
		alg  Algorithm
		at   int
		want float64
	}{
		{"gradient2", Gradient2()(), 17, 101.58379648968243},
		{"vegas", Vegas()(), 13, 93},
	} {
		limits := model(c.alg, 1, 200, 20, 40, batching)
		for w, l := range limits[c.at:] {
			if !near(l, c.want) {
				t.Errorf("%s: window %d: limit %v, want %v from window %d on", c.name, c.at+w, l, c.want, c.at)
				break
			}
		}
		if l := limits[c.at-1]; near(l, c.want) {
			t.Errorf("%s: limit %v already at window %d", c.name, l, c.at-1)
		}
	}
}

// A first probe that the process's own delay held, with callers blocked,
// says the process is the bottleneck from the start: the limit grows
// fourfold at once, as after any such window, not a window later. A later
// probe like it leaves the limit, which then came from windows of its
// own, and a first probe with nobody blocked does too.
func TestFirstProbeOwnBoundGrows(t *testing.T) {
	own := probe(4 * time.Millisecond)
	own.OwnDelay, own.Blocked = 3*time.Millisecond, 158
	for _, c := range []struct {
		name string
		alg  Algorithm
	}{{"Gradient2", newGradient2(nil)}, {"Vegas", Vegas()()}} {
		if got := c.alg.Update(20, own); !near(got, 80) {
			t.Errorf("%s's first probe, own-bound and blocked: limit %v, want 80", c.name, got)
		}
		if got := c.alg.Update(80, own); !near(got, 80) {
			t.Errorf("%s's next probe, the same: limit %v, want 80 kept", c.name, got)
		}
	}
	own.Blocked = 0
	if got := newGradient2(nil).Update(20, own); !near(got, 20) {
		t.Errorf("Gradient2's first probe, own-bound, nobody blocked: limit %v, want 20", got)
	}
	if got := Vegas()().Update(20, own); !near(got, 20) {
		t.Errorf("Vegas's first probe, own-bound, nobody blocked: limit %v, want 20", got)
	}
}
