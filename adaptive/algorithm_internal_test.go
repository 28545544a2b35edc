package adaptive

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

const ms = float64(time.Millisecond)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func sample(latency time.Duration, inflight int) Sample {
	return Sample{Timed: 10, MeanLatency: latency, MinLatency: latency, MaxInFlight: inflight, Elapsed: time.Second}
}

func probe(latency time.Duration) Sample {
	s := sample(latency, 1)
	s.Probe = true
	return s
}

// primed returns a Gradient2 whose first probe measured 10ms.
func primed(opts ...Gradient2Option) *gradient2 {
	g := newGradient2(opts)
	g.nextProbe = time.Hour
	g.Update(20, probe(10*time.Millisecond))
	g.cooldown = 0 // so that a window may call for a probe at once
	return g
}

// Gradient2, window by window against a baseline of 10ms at limit 20:
// latency at the baseline grows the limit by √limit, within 1.1 of it by
// 1, within
// the tolerance holds it, above it brings it down at once to
// limit·1.5/r (by half at most) and holds the window after; a drop takes
// a tenth away; a window that never came near the limit holds it.
func TestGradient2Steps(t *testing.T) {
	for _, c := range []struct {
		name  string
		steps []Sample
		want  []float64
	}{
		{"at the baseline: +√20", []Sample{sample(10*time.Millisecond, 20)}, []float64{20 + math.Sqrt(20)}},
		{"a hair above: +1", []Sample{sample(10*time.Millisecond+1, 20)}, []float64{21}},
		{"1.1 times: +1", []Sample{sample(11*time.Millisecond, 20)}, []float64{21}},
		{"1.1 times and a ns: holds", []Sample{sample(11*time.Millisecond+1, 20)}, []float64{20}},
		{"1.5 times: holds", []Sample{sample(15*time.Millisecond, 20)}, []float64{20}},
		{"2 times: 20·1.5/2, then holds", []Sample{sample(20*time.Millisecond, 20), sample(20*time.Millisecond, 15)}, []float64{15, 15}},
		{"2.9 times: by half at most", []Sample{sample(29*time.Millisecond, 20)}, []float64{10.344827586206897}},
		{"drop: a tenth away", []Sample{{Dropped: 1}}, []float64{18}},
		{"below half the limit in flight: holds", []Sample{sample(10*time.Millisecond, 9)}, []float64{20}},
		{"half the limit in flight: moves", []Sample{sample(10*time.Millisecond, 10)}, []float64{20 + math.Sqrt(20)}},
		{"no timed call: holds", []Sample{{MaxInFlight: 20}}, []float64{20}},
	} {
		g := primed()
		limit := 20.0
		for i, s := range c.steps {
			limit = g.Update(limit, s)
			if !near(limit, c.want[i]) {
				t.Errorf("%s, window %d: limit %v, want %v", c.name, i, limit, c.want[i])
			}
		}
	}
}

// The first window of a Gradient2 is a probe, and its latency is the
// baseline whatever the windows after it see; a window 20% faster than the
// baseline, or slower than 3 times it, or above the tolerance for 3
// windows in a row, calls for a probe and holds the limit meanwhile. The
// window that called for it is judged against the probe's latency: still
// above the tolerance, the limit falls then; not, it holds. A window with
// fewer than half the limit in flight calls for none: the load held it
// back, not the limit.
func TestGradient2Probes(t *testing.T) {
	alg := Gradient2()().(*gradient2)
	if !alg.ProbeNext() {
		t.Fatal("a fresh Gradient2 does not ask for a probe first")
	}
	for _, c := range []struct {
		name       string
		window     Sample
		probe      bool
		probeAt    time.Duration // the probe's latency
		want, then float64       // the limit after the window, and after the probe
	}{
		{"20% faster: probe; the new baseline holds", sample(8*time.Millisecond, 20), true, 8 * time.Millisecond, 20, 20},
		{"a hair less than 20% faster: grows", sample(8*time.Millisecond+1, 20), false, 0, 20 + math.Sqrt(20), 0},
		{"3 times slower: no jump, falls by half at once", sample(30*time.Millisecond, 20), false, 0, 10, 0},
		{"4 times slower: probe from 20/4; the service is slower: back to 20", sample(40*time.Millisecond, 20), true, 40 * time.Millisecond, 5, 20},
		{"4 times slower: probe from 20/4; still queued: 20·1.5/4, not held at half", sample(40*time.Millisecond, 20), true, 10 * time.Millisecond, 5, 7.5},
		{"4 times slower, twice slower service: 20·1.5/2", sample(40*time.Millisecond, 20), true, 20 * time.Millisecond, 5, 15},
		{"4 times slower, 9 of 20 in flight: holds, no probe", sample(40*time.Millisecond, 9), false, 0, 20, 0},
		{"20% faster, 9 of 20 in flight: holds, no probe", sample(8*time.Millisecond, 9), false, 0, 20, 0},
	} {
		g := primed()
		got := g.Update(20, c.window)
		if !near(got, c.want) || g.ProbeNext() != c.probe {
			t.Errorf("%s: limit %v, probe next %v; want %v, %v", c.name, got, g.ProbeNext(), c.want, c.probe)
			continue
		}
		if c.probe {
			if got := g.Update(got, probe(c.probeAt)); !near(got, c.then) || g.ProbeNext() {
				t.Errorf("%s: after the probe, limit %v, probe next %v; want %v, false", c.name, got, g.ProbeNext(), c.then)
			}
		}
	}

	// Above the tolerance for 3 windows in a row (the first two falling,
	// the window after each fall holding): the third calls for a probe.
	g := primed()
	limit := 40.0
	var probes []bool
	for range 3 {
		limit = g.Update(limit, sample(16*time.Millisecond, int(limit)))
		probes = append(probes, g.ProbeNext())
	}
	if want := []bool{false, false, true}; !equalBools(probes, want) || !near(limit, 37.5) {
		t.Errorf("3 windows at 1.6 times the baseline: limit %v, probes %v; want 37.5 (one fall, one hold, one probe) and %v", limit, probes, want)
	}
	// Such windows with fewer than half the limit in flight call for none.
	g = primed()
	for i := range 5 {
		if got := g.Update(40, sample(16*time.Millisecond, 19)); got != 40 || g.ProbeNext() {
			t.Fatalf("window %d at 1.6 times the baseline, 19 of 40 in flight: limit %v, probe next %v; want 40, false", i+1, got, g.ProbeNext())
		}
	}
	// At most one triggered probe in 5 windows: right after one, the
	// trigger waits.
	g.Update(limit, probe(10*time.Millisecond))
	for i := range 5 {
		if g.Update(limit, sample(40*time.Millisecond, int(limit))); g.ProbeNext() != (i == 4) {
			t.Fatalf("window %d after a probe, 4 times slower: probe next %v, want %v", i+1, g.ProbeNext(), i == 4)
		}
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Gradient2 probes periodically, every interval jittered between 0.75 and
// 1.25 of it, counted in the windows' elapsed time.
func TestGradient2ProbeInterval(t *testing.T) {
	alg := Gradient2(Gradient2ProbeInterval(time.Minute))
	for range 100 {
		g := alg().(*gradient2)
		g.Update(20, probe(10*time.Millisecond))
		waited := time.Duration(0)
		for !g.ProbeNext() {
			g.Update(20, sample(12*time.Millisecond, 20))
			waited += time.Second
		}
		if waited < 45*time.Second || waited > 76*time.Second {
			t.Fatalf("periodic probe after %v, want between 45s and 75s (and a window)", waited)
		}
	}
}

// A periodic probe waits for a window whose load reached half the limit:
// below that a probe's quarter of the limit would only hold callers back
// (50 of them, at a limit of 100 and a probe's 25 in flight, each waiting
// a round trip). Gradient2 and Vegas keep their limit and ask for no probe
// through ten minutes of windows with 40 in flight; the first window with
// 50 calls for the probe that is overdue.
func TestPeriodicProbeWaitsForLoad(t *testing.T) {
	for name, alg := range map[string]func() Algorithm{
		"gradient2": Gradient2(Gradient2ProbeInterval(time.Minute)),
		"vegas":     Vegas(VegasProbe(1)),
	} {
		a := alg()
		p := a.(Prober)
		limit := a.Update(100, probe(50*time.Millisecond))
		for w := range 600 {
			if limit = a.Update(limit, sample(50*time.Millisecond, 40)); limit != 100 || p.ProbeNext() {
				t.Fatalf("%s: window %d with 40 in flight: limit %v, probe next %v; want 100, false", name, w+1, limit, p.ProbeNext())
			}
		}
		if a.Update(limit, sample(50*time.Millisecond, 50)); !p.ProbeNext() {
			t.Errorf("%s: the first window with 50 in flight of 100 does not call for the overdue probe", name)
		}
	}
}

// OwnDelay is not the dependency's: Gradient2 compares the rest of the
// latency with the baseline, and when the process's own delay is most of
// the latency it grows a limit the load reached, never lowers it.
func TestGradient2OwnDelay(t *testing.T) {
	s := sample(30*time.Millisecond, 20)
	s.OwnDelay = 20 * time.Millisecond // the dependency's own 10ms: unqueued
	if got := primed().Update(20, s); !near(got, 20+math.Sqrt(20)) {
		t.Errorf("latency 30ms of which 20ms the process's own: limit %v, want %v", got, 20+math.Sqrt(20))
	}
	s = sample(30*time.Millisecond, 20)
	s.OwnDelay = 15 * time.Millisecond // half: the dependency's 15ms holds
	if got := primed().Update(20, s); !near(got, 20) {
		t.Errorf("latency 30ms of which 15ms the process's own: limit %v, want 20", got)
	}
	s = sample(100*time.Millisecond, 20)
	s.OwnDelay = 60 * time.Millisecond // most: the process is the bottleneck
	if got := primed().Update(20, s); !near(got, 20+math.Sqrt(20)) {
		t.Errorf("latency 100ms of which 60ms the process's own: limit %v, want %v", got, 20+math.Sqrt(20))
	}
	s.MaxInFlight = 9
	if got := primed().Update(20, s); !near(got, 20) {
		t.Errorf("the same with the load below half the limit: limit %v, want 20", got)
	}
}

// model runs alg for windows windows against a service saturated with
// demand (in flight = the limit) whose latency at concurrency n is
// latency(w, n), as the limiter does: clamped to [lo, hi], with a probe
// window at a quarter of the limit whenever the algorithm asks for one.
// It returns the limits after each window.
func model(alg Algorithm, lo, hi, initial float64, windows int, latency func(w int, n float64) float64) []float64 {
	limit, out := initial, make([]float64, 0, windows)
	prober, _ := alg.(Prober)
	probing := prober != nil
	for w := range windows {
		n := math.Floor(limit)
		var s Sample
		if probing {
			p := max(lo, math.Ceil(limit/4))
			s = sample(time.Duration(latency(w, p)), int(p))
			s.Probe = true
		} else {
			s = sample(time.Duration(latency(w, n)), int(n))
			s.AtMin = n <= lo
		}
		limit = min(max(alg.Update(limit, s), lo), hi)
		probing = prober != nil && prober.ProbeNext()
		out = append(out, limit)
	}
	return out
}

// queueing is a service that answers in base while at most capacity are in
// flight, and queues beyond: latency grows with n/capacity.
func queueing(base, capacity float64) func(int, float64) float64 {
	return func(_ int, n float64) float64 { return base * max(1, n/capacity) }
}

// netflixGradient2 is Netflix's Gradient2Limit as published, for
// comparison: a baseline that averages every window (plainly for the
// first 10, then with a weight of 2/601), and headroom 4 whenever latency
// is within the tolerance, smoothed by 0.2.
type netflixGradient2 struct {
	long float64
	n    int
}

func (g *netflixGradient2) Update(limit float64, s Sample) float64 {
	short := float64(s.MeanLatency)
	if g.n < 10 {
		g.long += (short - g.long) / float64(g.n+1)
		g.n++
	} else {
		g.long += (short - g.long) * 2 / 601
	}
	if g.long/short > 2 {
		g.long *= 0.95
	}
	if 2*float64(s.MaxInFlight) < limit {
		return limit
	}
	gradient := math.Max(0.5, math.Min(1, 1.5*g.long/short))
	return limit*0.8 + (limit*gradient+4)*0.2
}

// Pitfall: started under overload, Netflix's Gradient2 takes its baseline
// from loaded windows and never learns the no-load latency. A service that
// takes 8 at once in 10ms, under more demand than it can take from the
// first window: Netflix's holds 20 in flight with 12 queued for good;
// ours probes first, measures 10ms, and brings the limit to 12 at once,
// 4 queued: latency 1.5 times the no-load latency.
func TestGradient2StartedUnderOverload(t *testing.T) {
	netflix := model(&netflixGradient2{}, 1, 200, 20, 60, queueing(10*ms, 8))
	ours := model(Gradient2()(), 1, 200, 20, 60, queueing(10*ms, 8))
	if got := math.Floor(netflix[59]); got < 20 {
		t.Errorf("Netflix's Gradient2 ended at %v, want 20 or more (the pitfall)", got)
	}
	if want := []float64{20, 12}; !near(ours[0], want[0]) || !near(ours[1], want[1]) {
		t.Errorf("ours: %v after the probe and the first loaded window, want %v", ours[:2], want)
	}
	for w, l := range ours[1:] {
		if !near(l, 12) {
			t.Fatalf("ours: window %d: limit %v, want it to stay 12", w+1, l)
		}
	}
}

// Pitfall: Gradient2's limit creeps up under moderate overload
// (concurrency-limits PR 134). A service that takes 40 at once and queues
// beyond, under more demand than it can take, for an hour of 1s windows:
// Netflix's climbs to the maximum, ours settles within the tolerance of
// the capacity (40 to 60: latency at most 1.5 times the baseline) and
// stays there.
func TestGradient2NoCreep(t *testing.T) {
	const windows = 3600
	netflix := model(&netflixGradient2{}, 1, 1000, 20, windows, queueing(10*ms, 40))
	ours := model(Gradient2()(), 1, 1000, 20, windows, queueing(10*ms, 40))
	if got := netflix[windows-1]; got < 1000 {
		t.Errorf("Netflix's Gradient2 ended at %v, want it to creep to the maximum 1000 (the pitfall)", got)
	}
	for w, l := range ours[60:] {
		if l < 40 || l > 60 {
			t.Fatalf("window %d: limit %v, want it between 40 and 60", 60+w, l)
		}
	}
}

// Pitfall: the baseline latency drifts up during a long incident
// (failsafe-go issue 127), so that the limit climbs back while the service
// is still overloaded. The service's capacity falls from 40 to 10 for an
// hour: ours keeps the baseline at 10ms throughout (its probes run at a
// quarter of the limit, below the capacity), keeps the limit within the
// tolerance of the reduced capacity from 3 windows in, and recovers
// within 10 windows afterwards.
//
// The periodic probes' jitter comes from a seeded source: a probe that
// fell on the very window of the drop would run at a quarter of the limit
// from before it, above the new capacity, and measure that queue for one
// window (the jump of the next window calls for a probe that measures
// 10ms again). That is the model's instant change of capacity, not drift.
func TestGradient2BaselineDoesNotDrift(t *testing.T) {
	g := Gradient2()().(*gradient2)
	g.random = rand.New(rand.NewPCG(1, 2)).Float64
	g.nextProbe = g.jittered()
	capacity := func(w int) float64 {
		if w >= 600 && w < 4200 {
			return 10
		}
		return 40
	}
	limits := model(g, 1, 200, 20, 6000, func(w int, n float64) float64 {
		if w > 0 && g.baseline != 10*ms {
			t.Fatalf("window %d: baseline %v, want 10ms", w, time.Duration(g.baseline))
		}
		return 10 * ms * max(1, n/capacity(w))
	})
	for w := 603; w < 4200; w++ {
		if l := math.Floor(limits[w]); l < 10 || l > 15 {
			t.Fatalf("window %d of the incident: limit in force %v, want 10 to 15", w, l)
		}
	}
	for w := 4210; w < 6000; w++ {
		if l := limits[w]; l < 40 {
			t.Fatalf("window %d after the incident: limit %v, want it back to 40 or more", w, l)
		}
	}

	// The same incident under Netflix's: the baseline follows the latency
	// up, and the limit with it.
	nf := &netflixGradient2{}
	model(nf, 1, 200, 20, 4200, func(w int, n float64) float64 { return 10 * ms * max(1, n/capacity(w)) })
	if nf.long < 12*ms {
		t.Errorf("Netflix's baseline %v at the end of the incident, want it to have drifted up (the pitfall)", time.Duration(nf.long))
	}
}

// A service whose latency is its own, slower at any concurrency, is
// measured anew by a probe at once: once the probe is over the limit is
// back where it was, and it never falls below.
func TestGradient2SlowerServiceProbed(t *testing.T) {
	limits := model(Gradient2()(), 5, 200, 20, 100, func(w int, n float64) float64 {
		if w < 10 {
			return 10 * ms
		}
		return 50 * ms // five times slower, whatever the concurrency
	})
	for w, l := range limits[11:] {
		if l < limits[9] {
			t.Fatalf("window %d, after the service became slower for good: limit %v, below the %v before", w+11, l, limits[9])
		}
	}
}

// Under a healthy service whose latency does not depend on concurrency,
// no algorithm ever lowers the limit, over a day of windows that spans
// their probes (a probe holds the limit: only the limit in force is a
// quarter of it while it lasts).
func TestHealthyServiceNeverLowered(t *testing.T) {
	for name, alg := range map[string]Algorithm{"Gradient2": Gradient2()(), "Vegas": Vegas()(), "AIMD": newAIMD(nil)} {
		limits := model(alg, 1, 1000, 20, 86400/10, func(int, float64) float64 { return 10 * ms })
		prev := 20.0
		for w, l := range limits {
			if l < prev {
				t.Errorf("%s: window %d lowered the limit from %v to %v", name, w, prev, l)
				break
			}
			prev = l
		}
		if prev != 1000 {
			t.Errorf("%s: limit %v, want the maximum 1000 under a healthy service", name, prev)
		}
	}
}

// Vegas, against a no-load latency of 10ms from its first probe: a queue
// up to lg adds β, below α adds lg, from α to β holds, and beyond β takes
// away what the queue has above β, at once; a drop takes lg away; a window
// that never came near the limit holds it. At a limit of 100, lg = 2,
// α = 6 and β = 12.
func TestVegasSteps(t *testing.T) {
	const limit = 100.0
	// rtt returns a latency that makes a queue of q over a no-load latency
	// of 10ms at the limit.
	rtt := func(q float64) time.Duration {
		return time.Duration(math.Floor(10 * ms * limit / (limit - q)))
	}
	for _, c := range []struct {
		q, want float64
	}{
		{0, 112}, {2, 112}, {3, 102}, {5, 102}, {6, 100}, {12, 100}, {13, 99}, {20, 92},
	} {
		v := Vegas()().(*vegas)
		v.Update(limit, probe(10*time.Millisecond))
		if got := v.Update(limit, sample(rtt(c.q), limit)); !near(got, c.want) {
			t.Errorf("queue %v: got %v, want %v", c.q, got, c.want)
		}
	}
	v := Vegas()().(*vegas)
	v.Update(limit, probe(10*time.Millisecond))
	if got := v.Update(150, Sample{Dropped: 2}); got != 148 {
		t.Errorf("drop at 150: %v, want 148", got)
	}
	if got := v.Update(20, sample(10*time.Millisecond, 9)); got != 20 {
		t.Errorf("9 in flight at limit 20: %v, want 20", got)
	}
	if got := v.Update(20, sample(10*time.Millisecond, 10)); got != 26 {
		t.Errorf("10 in flight at limit 20: %v, want 26", got)
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
		v := Vegas()().(*vegas)
		v.Update(20, probe(c.noLoad))
		if got := v.Update(20, sample(20*time.Millisecond, 20)); got != c.want {
			t.Errorf("no-load latency %v, latency 20ms: limit %v, want %v", c.noLoad, got, c.want)
		}
	}
}

// VegasSmoothing(f) moves the limit a fraction f of the way to the one
// Vegas computes: with 0.5, halfway.
func TestVegasSmoothingHalfway(t *testing.T) {
	v := Vegas(VegasSmoothing(0.5))().(*vegas)
	v.Update(20, probe(10*time.Millisecond))
	if got := v.Update(20, sample(10*time.Millisecond, 20)); got != 23 {
		t.Errorf("no queue at limit 20: limit %v, want 23 (halfway to 26)", got)
	}
	if got := v.Update(20, Sample{Dropped: 1}); got != 19.5 {
		t.Errorf("drop at limit 20: limit %v, want 19.5 (halfway to 19)", got)
	}
}

// Vegas probes like Gradient2: first; when a window is 20% faster than
// the no-load latency, more than 3 times slower, or queued beyond β for
// 3 windows in a row, holding the limit meanwhile and judging the window
// against the probe; and after between half and all of multiplier·limit
// windows otherwise: with multiplier 10 and limit 10, 50 to 100.
func TestVegasProbes(t *testing.T) {
	if !Vegas()().(Prober).ProbeNext() {
		t.Fatal("a fresh Vegas does not ask for a probe first")
	}
	v := Vegas()().(*vegas)
	v.Update(20, probe(10*time.Millisecond))
	v.cooldown = 0
	if got := v.Update(20, sample(40*time.Millisecond, 20)); got != 5 || !v.ProbeNext() {
		t.Fatalf("4 times slower: limit %v, probe next %v; want 5 (20 lowered by the jump, for the probe), true", got, v.ProbeNext())
	}
	if got := v.Update(5, probe(40*time.Millisecond)); got != 20 {
		t.Errorf("the probe says the service is slower: limit %v, want 20 back", got)
	}
	v.Update(20, probe(10*time.Millisecond))
	v.cooldown = 0
	if got := v.Update(20, sample(40*time.Millisecond, 9)); got != 20 || v.ProbeNext() {
		t.Fatalf("4 times slower, 9 of 20 in flight: limit %v, probe next %v; want 20 (held), false", got, v.ProbeNext())
	}
	v.Update(20, probe(10*time.Millisecond))
	v.cooldown = 0
	if got := v.Update(20, sample(8*time.Millisecond, 20)); got != 20 || !v.ProbeNext() {
		t.Fatalf("20%% faster: limit %v, probe next %v; want 20 (held), true", got, v.ProbeNext())
	}

	v = Vegas(VegasProbe(10))().(*vegas)
	v.Update(10, probe(10*time.Millisecond)) // the first
	probes, since := 0, 0
	for range 20000 {
		since++
		s := sample(10*time.Millisecond, 10)
		if v.ProbeNext() {
			if since < 50 || since > 101 {
				t.Fatalf("probe %d came after %d windows, want 50 to 100 and the probe's own", probes+1, since)
			}
			s.Probe, probes, since = true, probes+1, 0
		}
		v.Update(10, s)
	}
	if probes < 200 {
		t.Errorf("%d probes in 20000 windows, want at least 200", probes)
	}
}

// AIMD backs off only on the dependency's latency above its timeout, and
// only on the latency of timed calls: a window whose mean less its own
// delay is the timeout exactly, or one with no timed call, grows a busy
// limit by 1.
func TestAIMDSteps(t *testing.T) {
	a := newAIMD([]AIMDOption{AIMDTimeout(100 * time.Millisecond)})
	own := sample(150*time.Millisecond, 10)
	own.OwnDelay = 50 * time.Millisecond
	for _, st := range []struct {
		name string
		s    Sample
		want float64
	}{
		{"mean at the timeout: +1", sample(100*time.Millisecond, 10), 21},
		{"mean above the timeout: ×0.9", sample(100*time.Millisecond+1, 10), 18},
		{"above, but the excess is the process's own: +1", own, 21},
		{"no timed call: +1", Sample{MeanLatency: time.Second, MaxInFlight: 10}, 21},
		{"app-limited: holds", sample(time.Millisecond, 9), 20},
		{"drop: ×0.9", Sample{Dropped: 1, MaxInFlight: 20}, 18},
	} {
		if got := a.Update(20, st.s); !near(got, st.want) {
			t.Errorf("AIMD %s: got %v, want %v", st.name, got, st.want)
		}
	}
}
