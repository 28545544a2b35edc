package adaptive

import (
	"math"
	"testing"
	"time"
)

const ms = float64(time.Millisecond)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func sample(latency time.Duration, inflight int) Sample {
	return Sample{Timed: 10, MeanLatency: latency, MinLatency: latency, MaxInFlight: inflight, Elapsed: time.Second}
}

// Each algorithm moves the limit up under light latency and down under
// queueing and drops, by Netflix's formulas (and our Gradient2 changes).
func TestAlgorithmSteps(t *testing.T) {
	g := newGradient2(nil)
	l := 20.0
	steps := []struct {
		name string
		alg  Algorithm
		s    Sample
		want float64
	}{
		{"Gradient2 first window: baseline, headroom √20", g, sample(10*time.Millisecond, 20), 20 + 0.2*math.Sqrt(20)},
		{"Gradient2 latency 2x: gradient 0.75", g, sample(20*time.Millisecond, 20), (20 + 0.2*math.Sqrt(20)) * (0.8 + 0.2*0.75)},
		{"Gradient2 latency 1.2x: holds", g, sample(12*time.Millisecond, 20), l},
		{"Gradient2 app-limited: holds", g, sample(50*time.Millisecond, 5), l},
		{"Gradient2 drop: halves, smoothed", g, Sample{Dropped: 1}, l * 0.9},
	}
	for i, st := range steps {
		if i == 2 {
			l = 20
		}
		got := st.alg.Update(l, st.s)
		if !near(got, st.want) {
			t.Errorf("%s: got %v, want %v", st.name, got, st.want)
		}
		if i < 2 {
			l = got
		}
	}
	// The slower windows at the limit left the baseline alone; the
	// app-limited one counts (the limiter cannot have slowed it): the
	// warm-up average of 10ms and 50ms.
	if !near(g.baseline, 30*ms) {
		t.Errorf("Gradient2 baseline %v, want 30ms", time.Duration(g.baseline))
	}

	v := newVegas(nil)
	for _, st := range []struct {
		name  string
		limit float64
		s     Sample
		want  float64
	}{
		{"Vegas first window: no-load latency", 20, sample(10*time.Millisecond, 20), 20},
		{"Vegas no queue: +β = 6", 20, sample(10*time.Millisecond, 20), 26},
		{"Vegas queue 13 > β: −1", 26, sample(20*time.Millisecond, 26), 25},
		{"Vegas queue 3 (α): holds", 25, sample(11200*time.Microsecond, 25), 25},
		{"Vegas queue 2 < α: +1", 25, sample(10800*time.Microsecond, 25), 26},
		{"Vegas app-limited: holds", 26, sample(20*time.Millisecond, 5), 26},
		{"Vegas drop: −lg", 150, Sample{Dropped: 2}, 148},
	} {
		if got := v.Update(st.limit, st.s); !near(got, st.want) {
			t.Errorf("%s: got %v, want %v", st.name, got, st.want)
		}
	}

	a := newAIMD(nil)
	for _, st := range []struct {
		name  string
		limit float64
		s     Sample
		want  float64
	}{
		{"AIMD busy: +1", 20, sample(time.Millisecond, 10), 21},
		{"AIMD app-limited: holds", 20, sample(time.Millisecond, 9), 20},
		{"AIMD drop: ×0.9", 20, Sample{Dropped: 1, MaxInFlight: 20}, 18},
		{"AIMD slower than 5s: ×0.9", 20, sample(6*time.Second, 20), 18},
	} {
		if got := a.Update(st.limit, st.s); !near(got, st.want) {
			t.Errorf("%s: got %v, want %v", st.name, got, st.want)
		}
	}
}

// model runs alg for windows windows against a service saturated with
// demand (in flight = the limit) whose latency at concurrency n is
// latency(n), clamping as the limiter does, and returns the limits.
func model(alg Algorithm, lo, hi, initial float64, windows int, latency func(w int, n float64) float64) []float64 {
	limit, out := initial, make([]float64, 0, windows)
	for w := range windows {
		n := math.Floor(limit)
		s := sample(time.Duration(latency(w, n)), int(n))
		s.AtMin = n <= lo
		limit = min(max(alg.Update(limit, s), lo), hi)
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
// comparison: headroom 4 whenever latency is within the tolerance, and a
// baseline that follows every window.
type netflixGradient2 struct {
	long float64
	n    int
}

func (g *netflixGradient2) Update(limit float64, s Sample) float64 {
	short := float64(s.MeanLatency)
	if g.n < warmup {
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

// Pitfall: Gradient2's limit creeps up under moderate overload
// (concurrency-limits PR 134). A service that takes 40 at once and queues
// beyond, under more demand than it can take, for an hour of 1s windows:
// Netflix's climbs to the maximum, ours settles within the tolerance of
// the capacity (40 to 60: latency at most 1.5 times the baseline) and
// stays there.
func TestGradient2NoCreep(t *testing.T) {
	const windows = 3600
	netflix := model(&netflixGradient2{}, 1, 1000, 20, windows, queueing(10*ms, 40))
	ours := model(newGradient2(nil), 1, 1000, 20, windows, queueing(10*ms, 40))
	if got := netflix[windows-1]; got < 1000 {
		t.Errorf("Netflix's Gradient2 ended at %v, want it to creep to the maximum 1000 (the pitfall)", got)
	}
	for w, l := range ours[600:] {
		if l < 40 || l > 60 {
			t.Fatalf("window %d: limit %v, want it between 40 and 60", 600+w, l)
		}
	}
	if a, b := ours[1200], ours[windows-1]; !near(a, b) {
		t.Errorf("limit %v after 20 minutes, %v after an hour: want it settled", a, b)
	}
}

// Pitfall: the baseline latency drifts up during a long incident
// (failsafe-go issue 127), so that the limit climbs back while the service
// is still overloaded. The service's capacity falls from 40 to 10 for an
// hour: ours keeps the baseline at 10ms throughout, keeps the limit within
// the tolerance of the reduced capacity, and recovers afterwards.
func TestGradient2BaselineDoesNotDrift(t *testing.T) {
	g := newGradient2(nil)
	capacity := func(w int) float64 {
		if w >= 600 && w < 4200 {
			return 10
		}
		return 40
	}
	limits := model(g, 1, 200, 20, 6000, func(w int, n float64) float64 {
		if w == 4199 && g.baseline != 10*ms {
			t.Errorf("baseline %v at the end of the incident, want 10ms", time.Duration(g.baseline))
		}
		return 10 * ms * max(1, n/capacity(w))
	})
	for w := 900; w < 4200; w++ {
		if l := math.Floor(limits[w]); l < 10 || l > 15 {
			t.Fatalf("window %d of the incident: limit in force %v, want 10 to 15", w, l)
		}
	}
	if l := limits[5999]; l < 40 {
		t.Errorf("limit %v after the incident, want it back to 40 or more", l)
	}

	// The same incident under Netflix's: the baseline follows the latency
	// up, and the limit with it.
	nf := &netflixGradient2{}
	model(nf, 1, 200, 20, 4200, func(w int, n float64) float64 { return 10 * ms * max(1, n/capacity(w)) })
	if nf.long < 12*ms {
		t.Errorf("Netflix's baseline %v at the end of the incident, want it to have drifted up (the pitfall)", time.Duration(nf.long))
	}
}

// A service whose latency is its own, slower at any concurrency, becomes
// the new baseline once the limit is at its lower bound: the limiter does
// not stay pinned low for good.
func TestGradient2BaselineFollowsSlowerService(t *testing.T) {
	g := newGradient2(nil)
	limits := model(g, 5, 200, 20, 3000, func(w int, n float64) float64 {
		if w < 100 {
			return 10 * ms
		}
		return 50 * ms // five times slower, whatever the concurrency
	})
	if l := limits[2999]; l < 100 {
		t.Errorf("limit %v long after the service became slower for good, want it grown back past 100", l)
	}
}

// Pitfall: Envoy's periodic minimum-RTT measurement pins the limit low,
// and callers see bursts of refusals (envoy 8337). None of ours measures
// that way: under a healthy service whose latency does not depend on
// concurrency, no algorithm ever lowers the limit, over a day of windows
// that spans Vegas' probes.
func TestNoPinnedProbe(t *testing.T) {
	for name, alg := range map[string]Algorithm{"Gradient2": newGradient2(nil), "Vegas": newVegas(nil), "AIMD": newAIMD(nil)} {
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

// AIMD backs off only on latency above its timeout, and only on the
// latency of timed calls: a window whose mean is the timeout exactly, or
// one with no timed call, grows a busy limit by 1.
func TestAIMDTimeoutBoundary(t *testing.T) {
	a := newAIMD([]AIMDOption{AIMDTimeout(100 * time.Millisecond)})
	for _, st := range []struct {
		name string
		s    Sample
		want float64
	}{
		{"mean at the timeout: +1", sample(100*time.Millisecond, 10), 21},
		{"mean above the timeout: ×0.9", sample(100*time.Millisecond+1, 10), 18},
		{"no timed call: +1", Sample{MeanLatency: time.Second, MaxInFlight: 10}, 21},
	} {
		if got := a.Update(20, st.s); !near(got, st.want) {
			t.Errorf("AIMD %s: got %v, want %v", st.name, got, st.want)
		}
	}
}

// Gradient2LongWindow(n) sets the weight of a window in the baseline, once
// the first 10 are averaged plainly, to 2/(n+1): with n = 19, a window of
// 5ms after ten of 10ms brings the baseline to 9.5ms (the default, 600,
// to 10ms − 5ms·2/601).
func TestGradient2LongWindow(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []Gradient2Option
		want float64
	}{
		{"LongWindow(19)", []Gradient2Option{Gradient2LongWindow(19)}, 9.5 * ms},
		{"default", nil, 10*ms - 5*ms*2/601},
	} {
		g := newGradient2(c.opts)
		for range warmup {
			g.Update(20, sample(10*time.Millisecond, 20))
		}
		if g.n != warmup || !near(g.baseline, 10*ms) {
			t.Fatalf("%s: after the warm-up, %d windows and baseline %v, want %d and 10ms", c.name, g.n, time.Duration(g.baseline), warmup)
		}
		g.Update(20, sample(5*time.Millisecond, 20))
		if !near(g.baseline, c.want) {
			t.Errorf("%s: baseline %v, want %v", c.name, time.Duration(g.baseline), time.Duration(c.want))
		}
	}
}

// A queued window slower than the baseline by a ratio within epsilon of 1
// is as fast as it, and is averaged in; one slower by more leaves the
// baseline alone.
func TestGradient2QueueingEpsilon(t *testing.T) {
	g := newGradient2(nil)
	g.observe(10*ms, false, false)
	b := g.baseline
	g.observe(b*(1+2*epsilon), false, false)
	if g.n != 1 || g.baseline != b {
		t.Errorf("slower by 2ε: %d windows, baseline %v; want 1 and the baseline unchanged", g.n, g.baseline)
	}
	g.observe(b*(1+epsilon), false, false)
	if g.n != 2 {
		t.Errorf("slower by ε: %d windows, want 2 (averaged in)", g.n)
	}
}

// Vegas' thresholds scale with lg: at a limit of 100, lg = 2, α = 6 and
// β = 12. A queue up to lg adds β, one below α adds lg, one above β takes
// lg away, and one from α to β holds the limit.
func TestVegasThresholds(t *testing.T) {
	const limit = 100.0
	// rtt returns a latency that makes a queue of q over a no-load latency
	// of 10ms at the limit.
	rtt := func(q float64) time.Duration {
		return time.Duration(math.Floor(10 * ms * limit / (limit - q)))
	}
	v := newVegas(nil)
	v.Update(limit, sample(10*time.Millisecond, limit))
	for _, c := range []struct {
		q, want float64
	}{
		{0, 112}, {2, 112}, {3, 102}, {5, 102}, {6, 100}, {12, 100}, {13, 98},
	} {
		if got := v.Update(limit, sample(rtt(c.q), limit)); !near(got, c.want) {
			t.Errorf("queue %v: got %v, want %v", c.q, got, c.want)
		}
	}
}

// Vegas measures the no-load latency afresh after between half and all of
// multiplier·limit windows, jittered: with multiplier 10 and limit 10,
// every 50 to 100 windows.
func TestVegasProbeInterval(t *testing.T) {
	v := newVegas([]VegasOption{VegasProbe(10)})
	probes, since := 0, 0
	for range 20000 {
		since++
		v.Update(10, sample(10*time.Millisecond, 10))
		if v.windows != 0 {
			continue
		}
		if since < 50 || since > 100 {
			t.Fatalf("probe %d came after %d windows, want 50 to 100", probes+1, since)
		}
		probes, since = probes+1, 0
	}
	if probes < 200 {
		t.Errorf("%d probes in 20000 windows, want at least 200", probes)
	}
}
