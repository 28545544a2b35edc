package main

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/adaptive"
)

// settledAt is from the first sample from which the limit stays within
// the band up to to: at from itself if it never leaves it, never if the
// last sample before to is outside.
func TestSettledAt(t *testing.T) {
	ms := 100 * time.Millisecond
	for _, tc := range []struct {
		name   string
		limits []int // at 0, 100ms, ...
		want   time.Duration
	}{
		{"within throughout", []int{10, 12, 16, 9}, 0},
		{"falls into it", []int{20, 20, 13, 13}, 2 * ms},
		{"leaves and comes back", []int{13, 17, 13, 13}, 2 * ms},
		{"leaves at the end", []int{13, 13, 13, 8}, -1},
		{"after to is not looked at", []int{13, 13, 13, 13, 20}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var samples []sample
			for i, n := range tc.limits {
				samples = append(samples, sample{at: time.Duration(i) * ms, limit: n})
			}
			if got := settledAt(samples, 0, 4*ms, 9, 16); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// Three callers need a core at once: the first two take one each and
// the third waits for the first to be free, 1ms less the 4ns that it
// came later. Each acts at instants of its own, 2i+1 nanoseconds past a
// multiple of 128, and mean reports both of a call's waits, then starts
// again from nothing.
func TestCores(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		c := newCores(start)
		done := make([]time.Duration, 3)
		var wg sync.WaitGroup
		for i := range done {
			wg.Go(func() {
				c.run(i)
				done[i] = time.Since(start)
			})
		}
		wg.Wait()
		// 1ms is 64 past a multiple of 128ns: 1ms+1ns is 65 past one,
		// and caller 0's next instant is 1ms+65ns; 2ms is a multiple.
		want := []time.Duration{time.Millisecond + 65, time.Millisecond + 67, 2*time.Millisecond + 5}
		for i := range done {
			if done[i] != want[i] {
				t.Errorf("caller %d done at %v, want %v", i, done[i], want[i])
			}
		}
		if got, want := c.mean(), 2*(time.Millisecond-4)/3; got != want {
			t.Errorf("mean %v, want %v", got, want)
		}
		if got := c.mean(); got != 0 {
			t.Errorf("mean read again %v, want 0", got)
		}
	})
}

// script is a Prober that returns its limits in turn and asks for a
// probe after the windows marked.
type script struct {
	limits []float64
	asks   []bool
	i      int
}

func (s *script) Update(float64, adaptive.Sample) float64 { s.i++; return s.limits[s.i-1] }
func (s *script) ProbeNext() bool                         { return s.asks[s.i-1] }

// tracked keeps the limit of each window that does not ask for a probe,
// within the limiter's bounds: a window's limit that only starts a probe
// is not the algorithm's.
func TestTracked(t *testing.T) {
	tr := &tracked{Prober: &script{
		limits: []float64{13.7, 4, 14, 250, 0.5},
		asks:   []bool{false, true, false, false, false},
	}}
	tr.limit.Store(ourInitial)
	var got []int
	for range 5 {
		tr.Update(0, adaptive.Sample{})
		got = append(got, int(tr.limit.Load()))
	}
	want := []int{13, 13, 14, ourMax, ourMin}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("limits %v, want %v", got, want)
		}
	}
}

// figuresOf counts good answers within the objective; its p50 and p99
// are over the requests not shed, p99All over all of them.
func TestFiguresOf(t *testing.T) {
	ms := time.Millisecond
	var out []outcome
	for i := range 100 {
		o := outcome{due: time.Duration(i) * ms, latency: 10 * ms}
		switch {
		case i >= 98:
			o.kind, o.latency = shed, time.Second
		case i == 97:
			o.kind, o.latency = failed, 900*ms
		case i == 96:
			o.latency = 200 * ms
		}
		out = append(out, o)
	}
	got := figuresOf(out, 0, 100*ms, every)
	want := figures{sent: 100, good: 96, answered: 97, shed: 2, p50: 10 * ms, p99: 900 * ms, p99All: time.Second}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
