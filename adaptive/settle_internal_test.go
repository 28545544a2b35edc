package adaptive

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/towergo/tower"
)

// blocked returns sample(latency, inflight) with callers blocked at the
// limit.
func blocked(latency time.Duration, inflight int) Sample {
	s := sample(latency, inflight)
	s.Blocked = 3
	return s
}

// Gradient2's slow start: a window without queueing whose callers were
// blocked at the limit doubles it, from at least the limit that last
// queued; below that limit it grows by the headroom, √limit, until
// latency falls by a quarter at the same limit (the dependency has room
// it did not have). When the process's own delay is most of the latency,
// blocked callers quadruple it.
func TestGradient2SlowStart(t *testing.T) {
	g := primed()
	limit := 20.0
	for i, c := range []struct {
		name string
		s    Sample
		want float64
	}{
		{"no queueing, blocked: doubles", blocked(10*time.Millisecond, 20), 40},
		{"2 times the baseline: falls to 40·1.5/2, queued at 40", blocked(20*time.Millisecond, 40), 30},
		{"the window after a fall holds", blocked(10*time.Millisecond, 30), 30},
		{"no queueing below 40: +√30", blocked(10*time.Millisecond, 30), 30 + math.Sqrt(30)},
		{"1.5 times the baseline at 35: holds", blocked(15*time.Millisecond, 35), 30 + math.Sqrt(30)},
		{"a quarter faster at 35: doubles", blocked(10*time.Millisecond, 35), 2 * (30 + math.Sqrt(30))},
	} {
		limit = g.Update(limit, c.s)
		if !near(limit, c.want) {
			t.Fatalf("window %d, %s: limit %v, want %v", i, c.name, limit, c.want)
		}
	}

	if got := primed().Update(20, sample(10*time.Millisecond, 20)); !near(got, 20+math.Sqrt(20)) {
		t.Errorf("no queueing, nobody blocked: limit %v, want +√20", got)
	}
	if got := primed().Update(20, blocked(11*time.Millisecond, 20)); !near(got, 21) {
		t.Errorf("1.1 times the baseline, blocked: limit %v, want +1", got)
	}
	if got := primed().Update(20, blocked(10*time.Millisecond, 9)); !near(got, 20) {
		t.Errorf("blocked, but below half the limit in flight: limit %v, want 20", got)
	}
	s := blocked(100*time.Millisecond, 20)
	s.OwnDelay = 60 * time.Millisecond
	if got := primed().Update(20, s); !near(got, 80) {
		t.Errorf("the process the bottleneck, blocked: limit %v, want 80", got)
	}
}

// Vegas' slow start: no queue at all and callers blocked doubles the
// limit (β if more); a queue of up to lg adds β as before; the process as
// the bottleneck, blocked, quadruples it.
func TestVegasSlowStart(t *testing.T) {
	for _, c := range []struct {
		name  string
		limit float64
		s     Sample
		want  float64
	}{
		{"no queue, blocked: doubles", 100, blocked(10*time.Millisecond, 100), 200},
		{"no queue, blocked, small: β", 4, blocked(10*time.Millisecond, 4), 10},
		{"no queue, nobody blocked: β", 100, sample(10*time.Millisecond, 100), 112},
		{"a queue of 1, blocked: β", 100, blocked(time.Duration(math.Floor(10*ms*100/99)), 100), 112},
	} {
		v := Vegas()().(*vegas)
		v.Update(c.limit, probe(10*time.Millisecond))
		if got := v.Update(c.limit, c.s); !near(got, c.want) {
			t.Errorf("%s: limit %v, want %v", c.name, got, c.want)
		}
	}
	v := Vegas()().(*vegas)
	v.Update(20, probe(10*time.Millisecond))
	s := blocked(100*time.Millisecond, 20)
	s.OwnDelay = 60 * time.Millisecond
	if got := v.Update(20, s); !near(got, 80) {
		t.Errorf("the process the bottleneck, blocked: limit %v, want 80", got)
	}
}

// limitLog is an Algorithm that returns its values in turn, then holds,
// and records the samples it is given.
type limitLog struct {
	sampleLog
	next []float64
}

func (l *limitLog) Update(limit float64, s Sample) float64 {
	l.sampleLog.Update(limit, s)
	if len(l.next) == 0 {
		return limit
	}
	v := l.next[0]
	l.next = l.next[1:]
	return v
}

// After a window that moved the limit in force by a quarter or more, or
// whose mean latency moved by a quarter from the last window's, the next
// is short: it ends once it has lasted a tenth of the length and timed
// half the minimum (5 of 10). Otherwise a window lasts its length.
func TestShortWindows(t *testing.T) {
	for _, c := range []struct {
		name      string
		next      float64       // the limit the first window leaves, from 10
		latency   time.Duration // of the second window's calls, after 10ms in the first
		short     bool
		lastMeans time.Duration
	}{
		{"limit up by a quarter", 13, 10 * time.Millisecond, true, 0},
		{"limit down by a quarter", 7.5, 10 * time.Millisecond, true, 0},
		{"limit up by less", 12, 10 * time.Millisecond, false, 0},
		{"latency up by a quarter", 10, 10 * time.Millisecond, true, 8 * time.Millisecond},
		{"latency up by less", 10, 10 * time.Millisecond, false, 9 * time.Millisecond},
	} {
		alg := &limitLog{next: []float64{c.next}}
		g := windowGate(1, 10, alg)
		g.w.lastMean = c.lastMeans
		at := time.Duration(0)
		end := func(latency time.Duration) {
			at += time.Millisecond
			g.observe(at, latency, answered, 1)
		}
		for range 10 {
			end(10 * time.Millisecond)
		}
		at = time.Second - time.Millisecond
		end(10 * time.Millisecond) // the first window ends at 1s
		if len(alg.samples) != 1 {
			t.Fatalf("%s: %d windows after 1s, want 1", c.name, len(alg.samples))
		}
		for range 5 {
			end(c.latency)
		}
		at = time.Second + 100*time.Millisecond - time.Millisecond
		end(c.latency) // a tenth of the length in, 6 timed
		if got := len(alg.samples) == 2; got != c.short {
			t.Errorf("%s: the second window ended at a tenth of its length %v, want %v", c.name, got, c.short)
		}
	}
}

// A run of 5 timed calls (half the minimum) whose median is above twice
// the last window's mean ends the window at once, and the algorithm sees
// that run alone, each call counted at most twice the run's median; one
// call far slower does not. A run each of whose calls is below 3/4 of
// the last mean ends it too, but only while callers have been blocked at
// the limit in the window.
func TestRunEndsWindowEarly(t *testing.T) {
	for _, c := range []struct {
		name    string
		run     [5]time.Duration
		blocked int
		ends    bool
		mean    time.Duration
	}{
		{"three of five twice as slow and a ns", [5]time.Duration{20e6 + 5, 10e6, 20e6 + 5, 10e6, 20e6 + 5}, 0, true, 16e6 + 3},
		{"twice as slow", [5]time.Duration{20e6, 20e6, 20e6, 20e6, 20e6}, 0, false, 0},
		{"one call fifty times as slow", [5]time.Duration{10e6, 10e6, 500e6, 10e6, 10e6}, 0, false, 0},
		{"three times as slow, one fifty", [5]time.Duration{30e6, 500e6, 30e6, 30e6, 30e6}, 0, true, 36e6},
		{"a quarter faster, blocked", [5]time.Duration{7e6, 7e6, 7e6, 7e6, 7.4e6}, 1, true, 7.08e6},
		{"a quarter faster, one call not, blocked", [5]time.Duration{7e6, 7e6, 7e6, 7e6, 7.5e6}, 1, false, 0},
		{"a quarter faster, nobody blocked", [5]time.Duration{7e6, 7e6, 7e6, 7e6, 7e6}, 0, false, 0},
	} {
		alg := &sampleLog{}
		g := windowGate(1, 10, alg)
		g.w.lastMean = 10 * time.Millisecond
		g.w.blocked = c.blocked
		for i := range 3 {
			g.observe(time.Duration(i+1)*time.Millisecond, 10*time.Millisecond, answered, 1)
		}
		g.w.run = g.w.run[:0] // a run starts here
		for i, l := range c.run {
			g.observe(time.Duration(i+4)*time.Millisecond, l, answered, 1)
		}
		if got := len(alg.samples) == 1; got != c.ends {
			t.Fatalf("%s: window ended %v, want %v", c.name, got, c.ends)
		}
		if c.ends {
			if s := alg.samples[0]; s.Timed != 5 || s.MeanLatency != c.mean {
				t.Errorf("%s: sample of %d calls, mean %v; want the run's 5, mean %v", c.name, s.Timed, s.MeanLatency, c.mean)
			}
		}
	}
}

// A probe ends once it has timed as many calls as normal priority may
// have in flight at its limit, at most a short window's minimum: at a
// probe limit of 5 with the reserve of 10%, 4; with no reserve, 5; with a
// minimum of 6 (a short window's 3), 3.
func TestProbeSamples(t *testing.T) {
	for _, c := range []struct {
		minSamples int
		reserve    int64
		want       int
	}{{10, 100, 4}, {10, 0, 5}, {6, 100, 3}} {
		g := windowGate(1, c.minSamples, &sampleLog{})
		g.reserve = c.reserve
		g.w.limit = 20
		g.startProbeLocked()
		if g.w.probeSamples != c.want {
			t.Errorf("minSamples %d, reserve %d‰: a probe of %d samples, want %d", c.minSamples, c.reserve, g.w.probeSamples, c.want)
		}
	}
}

// Callers that find no permit under the limit count in the window's
// Blocked: those that wait and those turned away, as a LoadShed's probe
// of Ready with a done ctx is.
func TestBlockedCounted(t *testing.T) {
	g := windowGate(1, 1, &sampleLog{})
	g.state.Store(1 << limitShift)
	g.reserve = 0
	if v, _, _ := g.acquire(context.Background(), class(tower.PriorityNormal)); !v {
		t.Fatal("the first caller was not granted the permit")
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for range 2 {
		if _, _, err := g.acquire(done, class(tower.PriorityNormal)); err == nil {
			t.Fatal("a caller with a done ctx was granted a permit above the limit")
		}
	}
	if g.w.blocked != 2 {
		t.Errorf("Blocked %d, want 2", g.w.blocked)
	}
}
