package adaptive

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
)

// sampleLog is an Algorithm that never moves the limit and records the
// samples it is given.
type sampleLog struct{ samples []Sample }

func (s *sampleLog) Update(limit float64, smp Sample) float64 {
	s.samples = append(s.samples, smp)
	return limit
}

// windowGate returns a gate with limit 10 in bounds [1, 100], whose window
// started at 0, lasts 1s and needs minSamples timed calls, and which times
// one call in stride.
func windowGate(stride uint32, minSamples int, alg Algorithm) *gate {
	g := &gate{maxWaiting: -1}
	g.stride.Store(stride)
	g.w = window{
		alg: alg, limit: 10, min: 1, max: 100,
		length: time.Second, minSamples: minSamples,
	}
	g.w.run = make([]time.Duration, 0, g.w.few()) // as the limiter makes it
	g.state.Store(10 << limitShift)
	return g
}

// strideFor is the largest power of two at most calls/(4·minSamples), and
// at least 1 and at most maxStride.
func TestStrideFor(t *testing.T) {
	for _, tc := range []struct {
		calls, minSamples int
		want              uint32
	}{
		{0, 1, 1},
		{4, 1, 1},
		{7, 1, 1},
		{8, 1, 2},
		{15, 1, 2},
		{16, 1, 4},
		{31, 1, 4},
		{32, 1, 8},
		{255, 1, 32},
		{256, 1, 64},
		{1 << 20, 1, maxStride},
		{79, 10, 1},
		{80, 10, 2},
		{160, 10, 4},
	} {
		if got := strideFor(tc.calls, tc.minSamples); got != tc.want {
			t.Errorf("strideFor(%d, %d) = %d, want %d", tc.calls, tc.minSamples, got, tc.want)
		}
	}
}

// Within a window, the stride doubles each time 8·few·shortDivisor calls
// have been observed (timed or dropped) since it last changed, up to
// maxStride: twice what strideFor leaves timed in a window of the full
// length, few being a short window's minimum, max(1, minSamples/2).
func TestStrideDoublesWithinWindow(t *testing.T) {
	for _, tc := range []struct {
		minSamples int
		from       uint32
		want       [3]uint32 // after n-1, n and 2n calls
	}{
		{1, 1, [3]uint32{1, 2, 4}},
		{2, 1, [3]uint32{1, 2, 4}},
		{3, 1, [3]uint32{1, 2, 4}},
		{4, 1, [3]uint32{1, 2, 4}},
		{10, 1, [3]uint32{1, 2, 4}},
		{2, 32, [3]uint32{32, 64, 64}},
	} {
		g := windowGate(tc.from, tc.minSamples, &sampleLog{})
		n := 8 * max(1, tc.minSamples/2) * shortDivisor
		observed := 0
		for i, upTo := range [3]int{n - 1, n, 2 * n} {
			for ; observed < upTo; observed++ {
				o := answered
				if observed%3 == 2 {
					o = drop
				}
				// At 0 the window has not lasted its length, so it never ends.
				if d := g.observe(0, time.Millisecond, o, 1); d != 0 {
					t.Fatalf("minSamples %d: the window ended, delta %d", tc.minSamples, d)
				}
			}
			if got := g.stride.Load(); got != tc.want[i] {
				t.Errorf("minSamples %d, from stride %d: after %d calls stride %d, want %d",
					tc.minSamples, tc.from, observed, got, tc.want[i])
			}
		}
	}
}

// A window ends with the first call observed once it has lasted its
// length: a call 1ns short of it does not end it, one at exactly its
// length does.
func TestWindowEndsAtLength(t *testing.T) {
	for _, tc := range []struct {
		end  time.Duration
		ends bool
	}{
		{time.Second - 1, false},
		{time.Second, true},
		{time.Second + 1, true},
	} {
		log := &sampleLog{}
		g := windowGate(1, 1, log)
		g.observe(tc.end, time.Millisecond, answered, 1)
		if got := len(log.samples) == 1; got != tc.ends {
			t.Errorf("call at %v: window ended %v, want %v", tc.end, got, tc.ends)
		} else if got && log.samples[0].Elapsed != tc.end {
			t.Errorf("call at %v: Elapsed %v, want %v", tc.end, log.samples[0].Elapsed, tc.end)
		}
	}
}

// A window's Sample is AtMin when the limit in force (the algorithm's,
// rounded down) is the least the bounds allow.
func TestWindowAtMin(t *testing.T) {
	for _, tc := range []struct {
		limit float64
		min   int
		want  bool
	}{
		{5, 5, true},
		{5.9, 5, true},
		{6, 5, false},
		{1, 1, true},
		{2, 1, false},
	} {
		log := &sampleLog{}
		g := windowGate(1, 1, log)
		g.w.limit, g.w.min = tc.limit, tc.min
		g.mu.Lock()
		g.closeLocked(time.Second)
		g.mu.Unlock()
		if got := log.samples[0].AtMin; got != tc.want {
			t.Errorf("limit %v, min %d: AtMin %v, want %v", tc.limit, tc.min, got, tc.want)
		}
	}
}

// The stride of the next window comes from the calls of the one that
// ended (its timed calls times the stride, plus its drops) at its rate
// over a short window, a tenth of the length: strideFor leaves four times
// a short window's minimum of them timed.
func TestNextWindowStride(t *testing.T) {
	for _, tc := range []struct {
		stride             uint32
		timed, dropped, ms int
		want               uint32
	}{
		{4, 100, 30, 1, 8}, // 430 calls, 43 in a short window
		{4, 80, 30, 1, 8},  // 350 calls
		{4, 100, 30, 4, 4}, // a short window's minimum is 2
		{2, 200, 0, 10, 2}, // 40 calls in a short window, whose minimum is 5
		{1, 390, 0, 10, 1},
		{1, 0, 80, 1, 2},
		{64, 100, 0, 1, maxStride},
		{64, 0, 0, 1, 1},
	} {
		g := windowGate(tc.stride, tc.ms, &sampleLog{})
		g.w.timed, g.w.dropped = tc.timed, tc.dropped
		g.mu.Lock()
		g.closeLocked(time.Second)
		g.mu.Unlock()
		if got := g.stride.Load(); got != tc.want {
			t.Errorf("stride %d, %d timed, %d dropped, minSamples %d: next stride %d, want %d",
				tc.stride, tc.timed, tc.dropped, tc.ms, got, tc.want)
		}
	}
}

// A window's MaxInFlight counts, for a timed call, the requests in flight
// when it started, and for a dropped one, timed or not, those in flight
// when it ended too (itself among them).
func TestWindowMaxInFlight(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stride uint32
		calls  int   // started 100ms apart from 0
		ends   int   // the call that ends, at 1.5s
		err    error // its error
		want   Sample
	}{
		{"timed drop, more in flight at its end", 1, 3, 0, context.DeadlineExceeded,
			Sample{Dropped: 1, MaxInFlight: 3, Elapsed: 1500 * time.Millisecond}},
		{"untimed drop", 2, 3, 1, context.DeadlineExceeded,
			Sample{Dropped: 1, MaxInFlight: 3, Elapsed: 1500 * time.Millisecond}},
		{"answered, more in flight at its end", 1, 2, 0, nil,
			Sample{Timed: 1, MeanLatency: 1500 * time.Millisecond, MinLatency: 1500 * time.Millisecond,
				MaxInFlight: 1, Elapsed: 1500 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				log := &sampleLog{}
				results := make([]chan error, tc.calls)
				for i := range results {
					results[i] = make(chan error, 1)
				}
				svc := tower.ServiceFunc[int, int](func(_ context.Context, i int) (int, error) {
					return i, <-results[i]
				})
				l := New[int, int](svc, func() Algorithm { return log }, WithInitial(10), WithWindow(time.Second, 1))
				l.g.stride.Store(tc.stride)
				for i := range tc.calls {
					go tower.Call[int, int](t.Context(), l, i)
					synctest.Wait()
					time.Sleep(100 * time.Millisecond)
				}
				time.Sleep(1500*time.Millisecond - time.Duration(tc.calls)*100*time.Millisecond)
				results[tc.ends] <- tc.err
				synctest.Wait()
				if len(log.samples) != 1 {
					t.Fatalf("got %d windows, want 1", len(log.samples))
				}
				if got := log.samples[0]; got != tc.want {
					t.Errorf("sample %+v, want %+v", got, tc.want)
				}
				for i, r := range results {
					if i != tc.ends {
						r <- nil
					}
				}
				synctest.Wait()
			})
		})
	}
}
