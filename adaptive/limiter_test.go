package adaptive_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towertest"
)

// script is an Algorithm that returns its values in turn, then holds, and
// records what it was given.
type script struct {
	next    []float64
	limits  []float64
	samples []adaptive.Sample
}

func (s *script) Update(limit float64, smp adaptive.Sample) float64 {
	s.limits, s.samples = append(s.limits, limit), append(s.samples, smp)
	if len(s.next) == 0 {
		return limit
	}
	v := s.next[0]
	s.next = s.next[1:]
	return v
}

// hold is an Algorithm that never moves the limit.
func hold() adaptive.Algorithm { return &script{} }

// just returns a function that makes alg, for New.
func just(alg adaptive.Algorithm) func() adaptive.Algorithm {
	return func() adaptive.Algorithm { return alg }
}

func mock(t *testing.T, alg adaptive.Algorithm, opts ...adaptive.Option) (*adaptive.Limiter[string, string], *towertest.Handle[string, string]) {
	t.Helper()
	m, h := towertest.NewMock[string, string]()
	return adaptive.New[string, string](m, just(alg), opts...), h
}

func withPriority(p tower.Priority) context.Context {
	return tower.WithPriority(context.Background(), p)
}

// Waiters of one priority are served oldest first.
func TestFIFOWithinPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, h := mock(t, hold(), adaptive.WithBounds(1, 1))
		h.AllowAll()
		first := towertest.MustReady(t, l)
		var waiters []*towertest.Outcome[tower.Permit[string, string]]
		for range 5 {
			waiters = append(waiters, towertest.GoReady(t.Context(), tower.Service[string, string](l)))
			synctest.Wait()
		}
		if got := l.Waiting(); got != 5 {
			t.Fatalf("Waiting() = %d, want 5", got)
		}
		first.Release()
		for i, w := range waiters {
			synctest.Wait()
			for j, o := range waiters[i+1:] {
				if o.Done() {
					t.Fatalf("waiter %d was served before waiter %d", i+1+j, i)
				}
			}
			p := w.Value(t)
			p.Release()
		}
	})
}

// With a done ctx, Ready is a probe: it grants a free permit and otherwise
// returns ctx.Err() at once. Near the limit it refuses low priority first,
// normal next, and critical last.
func TestProbeByPriority(t *testing.T) {
	l, h := mock(t, hold(), adaptive.WithBounds(10, 10)) // r = 1: normal 9, low 8
	h.AllowAll()
	done := func(p tower.Priority) context.Context {
		ctx, cancel := context.WithCancel(withPriority(p))
		cancel()
		return ctx
	}
	var held []tower.Permit[string, string]
	take := func(p tower.Priority) bool {
		perm, err := l.Ready(done(p))
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Ready: %v, want context.Canceled", err)
			}
			return false
		}
		held = append(held, perm)
		return true
	}
	for i := range 8 {
		if !take(tower.PriorityLow) {
			t.Fatalf("low request %d refused, want 8 admitted", i)
		}
	}
	if take(tower.PriorityLow) {
		t.Fatal("9th low request admitted, want refused at limit - 2r = 8")
	}
	if !take(tower.PriorityNormal) || take(tower.PriorityNormal) {
		t.Fatal("want exactly one more normal request admitted, up to limit - r = 9")
	}
	if !take(tower.PriorityCritical) || take(tower.PriorityCritical) {
		t.Fatal("want exactly one more critical request admitted, up to the limit 10")
	}
	if got := l.InFlight(); got != 10 {
		t.Errorf("InFlight() = %d, want 10", got)
	}
	for i := range held {
		held[i].Release()
	}
	if got := l.InFlight(); got != 0 {
		t.Errorf("InFlight() = %d after release, want 0", got)
	}
}

// A caller whose ctx ends while it waits gets ctx.Err(), and leaves
// nothing behind: the next caller gets the permit.
func TestContextEndsWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, h := mock(t, hold(), adaptive.WithBounds(1, 1))
		h.AllowAll()
		first := towertest.MustReady(t, l)
		ctx, cancel := context.WithCancel(t.Context())
		w := towertest.GoReady(ctx, tower.Service[string, string](l))
		next := towertest.GoReady(t.Context(), tower.Service[string, string](l))
		synctest.Wait()
		cancel()
		w.ExpectError(t, context.Canceled)
		if got := l.Waiting(); got != 1 {
			t.Errorf("Waiting() = %d after a waiter gave up, want 1", got)
		}
		first.Release()
		p := next.Value(t)
		if got := l.InFlight(); got != 1 {
			t.Errorf("InFlight() = %d, want 1", got)
		}
		p.Release()
		if got, want := l.InFlight()+l.Waiting(), 0; got != want {
			t.Errorf("InFlight()+Waiting() = %d, want %d", got, want)
		}
	})
}

// Beyond WithMaxWaiting, Ready does not wait: its permit sheds the request
// with loadshed.ErrOverloaded, and Ready never fails (which would break
// the service for good).
func TestMaxWaitingSheds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var counts metrics.Counts
		l, h := mock(t, hold(), adaptive.WithBounds(1, 1), adaptive.WithMaxWaiting(1), adaptive.WithMetrics(&counts))
		h.AllowAll()
		first := towertest.MustReady(t, l)
		waiter := towertest.GoReady(t.Context(), tower.Service[string, string](l))
		synctest.Wait()
		p, err := l.Ready(t.Context())
		if err != nil {
			t.Fatalf("Ready beyond the wait bound: %v, want a shedding permit", err)
		}
		if _, err := p.Call(t.Context(), "x"); !errors.Is(err, loadshed.ErrOverloaded) || !tower.IsOverloaded(err) {
			t.Errorf("Call of a shedding permit: %v, want loadshed.ErrOverloaded", err)
		}
		if n := h.Calls(); n != 0 {
			t.Errorf("inner service got %d calls, want 0", n)
		}
		if got := counts.Get(metrics.Shed); got != 1 {
			t.Errorf("Shed = %d, want 1", got)
		}
		// A done ctx still gets ctx.Err(), so that a LoadShed above sees the
		// limiter as not ready.
		done, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := l.Ready(done); !errors.Is(err, context.Canceled) {
			t.Errorf("Ready with a done ctx beyond the wait bound: %v, want context.Canceled", err)
		}
		first.Release()
		q := waiter.Value(t)
		q.Release()
	})
}

// WithMaxWaiting(0): nobody ever waits.
func TestMaxWaitingZero(t *testing.T) {
	l, h := mock(t, hold(), adaptive.WithBounds(1, 1), adaptive.WithMaxWaiting(0))
	h.AllowAll()
	first := towertest.MustReady(t, l)
	p, err := l.Ready(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Call(context.Background(), "x"); !errors.Is(err, loadshed.ErrOverloaded) {
		t.Errorf("got %v, want loadshed.ErrOverloaded", err)
	}
	first.Release()
}

// The limit stays within the bounds whatever the algorithm returns, and
// the algorithm is always handed a limit within them; NaN and infinities
// leave the limit alone.
func TestBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alg := &script{next: []float64{1000, 7.9, -5, math.NaN(), math.Inf(1), 12.5}}
		l := adaptive.New[int, int](sleeper(time.Millisecond), just(alg),
			adaptive.WithBounds(3, 40), adaptive.WithInitial(5), adaptive.WithWindow(time.Second, 1))
		if got := l.Limit(); got != 5 {
			t.Fatalf("initial Limit() = %d, want 5", got)
		}
		var got []int
		for range 7 {
			time.Sleep(time.Second)
			if _, err := tower.Call(t.Context(), tower.Service[int, int](l), 0); err != nil {
				t.Fatal(err)
			}
			got = append(got, l.Limit())
		}
		if want := []int{40, 7, 3, 3, 3, 12, 12}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("limits %v, want %v", got, want)
		}
		if want := []float64{5, 40, 7.9, 3, 3, 3, 12.5}; fmt.Sprint(alg.limits) != fmt.Sprint(want) {
			t.Errorf("algorithm was handed %v, want %v", alg.limits, want)
		}
	})
}

// When a window raises the limit, the new places go to the callers
// waiting at that instant, not at the next release: the call that ends
// the window gives its own permit to the first waiter, and the limit's
// rise from 1 to 3 admits the second.
func TestLimitRiseAdmitsWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alg := &script{next: []float64{3}}
		l := adaptive.New[int, int](sleeper(10*time.Millisecond), just(alg),
			adaptive.WithBounds(1, 3), adaptive.WithInitial(1), adaptive.WithWindow(5*time.Millisecond, 1))
		p := towertest.MustReady(t, l)
		w1 := towertest.GoReady(t.Context(), tower.Service[int, int](l))
		synctest.Wait()
		w2 := towertest.GoReady(t.Context(), tower.Service[int, int](l))
		synctest.Wait()
		start := time.Now()
		if _, err := p.Call(t.Context(), 0); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if !w1.Done() || !w2.Done() {
			t.Fatalf("waiters admitted %v and %v when the limit rose to %d, want both", w1.Done(), w2.Done(), l.Limit())
		}
		if got := time.Since(start); got != 10*time.Millisecond {
			t.Errorf("admitted after %v, want 10ms", got)
		}
		if got := l.InFlight(); got != 2 {
			t.Errorf("InFlight() = %d, want 2", got)
		}
		for _, w := range []*towertest.Outcome[tower.Permit[int, int]]{w1, w2} {
			q := w.Value(t)
			q.Release()
		}
	})
}

// A window closes after its length once it has timed enough calls, and
// its sample says what it saw.
func TestWindowSample(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alg := &script{}
		m, h := towertest.NewMock[int, int]()
		h.AllowAll()
		l := adaptive.New[int, int](m, just(alg), adaptive.WithInitial(10), adaptive.WithWindow(time.Second, 3))
		call := func(d time.Duration, err error) *towertest.Outcome[int] {
			o := towertest.GoRequest(t.Context(), tower.Service[int, int](l), 0)
			synctest.Wait()
			r, _ := h.TryNext()
			time.Sleep(d)
			if err != nil {
				r.Fail(err)
			} else {
				r.Respond(0)
			}
			synctest.Wait()
			return o
		}
		call(10*time.Millisecond, nil)
		call(30*time.Millisecond, nil)
		call(5*time.Second, timeout.ErrElapsed) // a drop, whose latency is not counted
		call(20*time.Millisecond, context.Canceled)
		if len(alg.samples) != 1 {
			t.Fatalf("got %d windows, want 1", len(alg.samples))
		}
		want := adaptive.Sample{Dropped: 1, Timed: 2, MeanLatency: 20 * time.Millisecond, MinLatency: 10 * time.Millisecond,
			MaxInFlight: 1, AtMin: false, Elapsed: 5040 * time.Millisecond}
		if got := alg.samples[0]; got != want {
			t.Errorf("sample %+v, want %+v", got, want)
		}
	})
}

// sleeper answers each request after d.
func sleeper(d time.Duration) tower.Service[int, int] {
	return tower.ServiceFunc[int, int](func(ctx context.Context, req int) (int, error) {
		time.Sleep(d)
		return req, nil
	})
}

func TestMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var counts metrics.Counts
		l, h := mock(t, hold(), adaptive.WithBounds(1, 1), adaptive.WithMetrics(&counts))
		h.AllowAll()
		p := towertest.MustReady(t, l)
		w := towertest.GoReady(t.Context(), tower.Service[string, string](l))
		synctest.Wait()
		if got := [2]int64{counts.Get(metrics.InFlight), counts.Get(metrics.Waiting)}; got != [2]int64{1, 1} {
			t.Errorf("InFlight, Waiting = %v, want [1 1]", got)
		}
		p.Release()
		q := w.Value(t)
		if got := [2]int64{counts.Get(metrics.InFlight), counts.Get(metrics.Waiting)}; got != [2]int64{1, 0} {
			t.Errorf("InFlight, Waiting = %v, want [1 0]", got)
		}
		q.Release()
		if got := counts.Get(metrics.InFlight); got != 0 {
			t.Errorf("InFlight = %d, want 0", got)
		}
	})
}

func TestPanics(t *testing.T) {
	m, _ := towertest.NewMock[int, int]()
	for _, tt := range []struct {
		want string
		f    func()
	}{
		{"adaptive.New: inner is nil", func() { adaptive.New[int, int](nil, just(hold())) }},
		{"adaptive.New: newAlg is nil", func() { adaptive.New[int, int](m, nil) }},
		{"adaptive.New: newAlg returned nil", func() { adaptive.New[int, int](m, just(nil)) }},
		{"adaptive.New: option 0 is nil", func() { adaptive.New[int, int](m, just(hold()), nil) }},
		{"adaptive.New: initial limit 30 is outside the bounds [1, 10]", func() {
			adaptive.New[int, int](m, just(hold()), adaptive.WithBounds(1, 10), adaptive.WithInitial(30))
		}},
		{"adaptive.NewLayer: newAlg is nil", func() { adaptive.NewLayer[int, int](nil) }},
		{"adaptive.NewLayer: newAlg returned nil", func() { adaptive.NewLayer[int, int](func() adaptive.Algorithm { return nil }) }},
		{"adaptive.WithBounds: want 1 <= min <= max <= 16777216, got min 0 and max 10", func() { adaptive.WithBounds(0, 10) }},
		{"adaptive.WithBounds: want 1 <= min <= max <= 16777216, got min 5 and max 4", func() { adaptive.WithBounds(5, 4) }},
		{"adaptive.WithInitial: n must be between 1 and 16777216, got 0", func() { adaptive.WithInitial(0) }},
		{"adaptive.WithMaxWaiting: n must not be negative, got -1", func() { adaptive.WithMaxWaiting(-1) }},
		{"adaptive.WithDropped: dropped is nil", func() { adaptive.WithDropped(nil) }},
		{"adaptive.WithWindow: want d > 0 and minSamples >= 1, got 0s and 10", func() { adaptive.WithWindow(0, 10) }},
		{"adaptive.WithReserve: fraction must be between 0 and 0.3, got 0.5", func() { adaptive.WithReserve(0.5) }},
		{"adaptive.Gradient2: option 0 is nil", func() { adaptive.Gradient2(nil) }},
		{"adaptive.Gradient2Smoothing: f must be above 0 and at most 1, got 0", func() { adaptive.Gradient2Smoothing(0) }},
		{"adaptive.Gradient2Tolerance: tolerance must be between 1 and 10, got 0.5", func() { adaptive.Gradient2Tolerance(0.5) }},
		{"adaptive.Gradient2QueueSize: n must be between 1 and 1000, got 0", func() { adaptive.Gradient2QueueSize(0) }},
		{"adaptive.Vegas: option 0 is nil", func() { adaptive.Vegas(nil) }},
		{"adaptive.VegasSmoothing: f must be above 0 and at most 1, got 2", func() { adaptive.VegasSmoothing(2) }},
		{"adaptive.VegasProbe: multiplier must be between 1 and 1000, got 0", func() { adaptive.VegasProbe(0) }},
		{"adaptive.AIMD: option 0 is nil", func() { adaptive.AIMD(nil) }},
		{"adaptive.AIMDBackoff: ratio must be at least 0.5 and below 1, got 1", func() { adaptive.AIMDBackoff(1) }},
		{"adaptive.AIMDTimeout: d must be positive, got 0s", func() { adaptive.AIMDTimeout(0) }},
	} {
		towertest.Panics(t, tt.want, tt.f)
	}
}

// The default classifier: timeouts, overload and throttling are drops.
func TestDropped(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{timeout.ErrElapsed, true},
		{context.DeadlineExceeded, true},
		{fmt.Errorf("wrapped: %w", loadshed.ErrOverloaded), true},
		{context.Canceled, false},
		{errors.New("boom"), false},
	} {
		if got := adaptive.Dropped(tt.err); got != tt.want {
			t.Errorf("Dropped(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
