package retry_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towertest"
)

// tryExponential is NewExponentialBackoff for the cases that tower's tests
// draw at random: false for those whose parameters it refuses, with a
// panic here where tower returns an error.
func tryExponential(min, max time.Duration, jitter float64) (b *retry.ExponentialBackoff, ok bool) {
	defer func() {
		if recover() != nil {
			b, ok = nil, false
		}
	}()
	return retry.NewExponentialBackoff(min, max, jitter), true
}

// cases returns n pairs of durations in whole milliseconds, from a fixed
// seed, with the edge cases first: tower's quickcheck tests draw any u64
// pair; these stay within what a Duration holds.
func cases(n int) [][2]time.Duration {
	edges := []int64{0, 1, 2, 50, 1000, 1 << 20, math.MaxInt64 / int64(time.Millisecond)}
	var out [][2]time.Duration
	for _, a := range edges {
		for _, b := range edges {
			out = append(out, [2]time.Duration{time.Duration(a) * time.Millisecond, time.Duration(b) * time.Millisecond})
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range n {
		a := r.Int64N(1 << uint(r.IntN(40)+1))
		b := r.Int64N(1 << uint(r.IntN(40)+1))
		out = append(out, [2]time.Duration{time.Duration(a) * time.Millisecond, time.Duration(b) * time.Millisecond})
	}
	return out
}

// tower: backoff_base_first. The first base is min.
func TestBackoffBaseFirst(t *testing.T) {
	for _, c := range cases(1000) {
		b, ok := tryExponential(c[0], c[1], 0)
		if !ok {
			continue // tower discards these cases
		}
		if got := b.Base(1); got != c[0] {
			t.Fatalf("min %v, max %v: got first base %v, want %v", c[0], c[1], got, c[0])
		}
	}
}

// tower: backoff_base. Every base lies in [min, max], however many
// attempts came before.
func TestBackoffBaseBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range cases(1000) {
		b, ok := tryExponential(c[0], c[1], 0)
		if !ok {
			continue
		}
		for _, n := range []int{1, 2, 31, 32, 33, 63, 64, 65, math.MaxInt, r.IntN(1 << 20)} {
			if got := b.Base(n); got < c[0] || got > c[1] {
				t.Fatalf("min %v, max %v, attempt %d: got base %v, want it within [min, max]", c[0], c[1], n, got)
			}
		}
	}
}

// tower: backoff_jitter. No jitter when the ratio is 0, the base is 0 or
// the base is max; some jitter otherwise.
func TestBackoffJitter(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i, c := range cases(1000) {
		jitter := []float64{0, 1, 100, r.Float64() * 100}[i%4]
		b, ok := tryExponential(c[0], c[1], jitter)
		if !ok {
			continue
		}
		b.SetRand(r.Float64) // seeded: a draw near 0 would make no jitter
		j := b.Jitter(c[0])
		if jitter == 0 || c[0] == 0 || c[0] == c[1] {
			if j != 0 {
				t.Fatalf("base %v, max %v, jitter %v: got %v, want 0", c[0], c[1], jitter, j)
			}
		} else if j <= 0 {
			t.Fatalf("base %v, max %v, jitter %v: got %v, want more than 0", c[0], c[1], jitter, j)
		}
	}
	// A base of whole seconds gets jitter too (tower's truncates the
	// scaled seconds to whole seconds, and would give none here).
	b := retry.NewExponentialBackoff(time.Second, 10*time.Second, 1)
	b.SetRand(func() float64 { return 0.25 })
	if got := b.Jitter(time.Second); got != 250*time.Millisecond {
		t.Errorf("base 1s, jitter 1, random 0.25: got %v, want 250ms", got)
	}
}

// The sequence of delays, exactly: doubling from min, capped at max; and
// with jitter, the random part added and cut to max.
func TestBackoffDelays(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		min, max time.Duration
		jitter   float64
		rand     float64
		want     []time.Duration // after attempts 1, 2, ...
	}{
		{"NoJitter", 100 * ms, time.Second, 0, 0.5, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second, time.Second}},
		{"HalfOfFullJitter", 100 * ms, time.Second, 1, 0.5, []time.Duration{150 * ms, 300 * ms, 600 * ms, time.Second, time.Second}},
		{"JitterRatio2", 100 * ms, 10 * time.Second, 2, 0.25, []time.Duration{150 * ms, 300 * ms, 600 * ms}},
		{"MinEqualsMax", time.Second, time.Second, 1, 0.99, []time.Duration{time.Second, time.Second}},
		{"ZeroMin", 0, time.Second, 1, 0.99, []time.Duration{0, 0}},
		{"SecondsAndNanos", 1500 * ms, time.Minute, 0.5, 0.5, []time.Duration{1875 * ms, 3750 * ms}},
		{"HugeCappedWithoutOverflow", time.Hour, math.MaxInt64, 100, 0.999, []time.Duration{time.Hour + time.Duration(99.9*float64(time.Hour))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := retry.NewExponentialBackoff(tt.min, tt.max, tt.jitter)
			b.SetRand(func() float64 { return tt.rand })
			for i, want := range tt.want {
				if got := b.Delay(i + 1); got != want {
					t.Errorf("Delay(%d): got %v, want %v", i+1, got, want)
				}
			}
		})
	}
	// A large attempt number and a large jitter stay within max.
	b := retry.NewExponentialBackoff(time.Hour, math.MaxInt64, 100)
	b.SetRand(func() float64 { return 0.999 })
	if got := b.Delay(40); got != math.MaxInt64 {
		t.Errorf("Delay(40): got %v, want the maximum Duration", got)
	}
}

// tower: jitter_must_be_finite, with every other rule of tower's
// InvalidBackoff, each a panic that names the parameter.
func TestBackoffInvalid(t *testing.T) {
	const fn = "retry.NewExponentialBackoff: "
	tests := []struct {
		name     string
		min, max time.Duration
		jitter   float64
		want     string
	}{
		{"MaxLessThanMin", 2 * time.Second, time.Second, 0, fn + "max must not be less than min, got min 2s and max 1s"},
		{"MaxZero", 0, 0, 0, fn + "max must not be zero"},
		{"MinNegative", -time.Second, time.Second, 0, fn + "min must not be negative, got -1s"},
		{"JitterNegative", 0, time.Second, -0.1, fn + "jitter must be between 0 and 100, got -0.1"},
		{"JitterOver100", 0, time.Second, 100.5, fn + "jitter must be between 0 and 100, got 100.5"},
		{"JitterNaN", 0, time.Millisecond, math.NaN(), fn + "jitter must be between 0 and 100, got NaN"},
		{"JitterPlusInf", 0, time.Millisecond, math.Inf(1), fn + "jitter must be between 0 and 100, got +Inf"},
		{"JitterMinusInf", 0, time.Millisecond, math.Inf(-1), fn + "jitter must be between 0 and 100, got -Inf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			towertest.Panics(t, tt.want, func() { retry.NewExponentialBackoff(tt.min, tt.max, tt.jitter) })
		})
	}
	// The valid edges.
	for _, j := range []float64{0, 100} {
		retry.NewExponentialBackoff(0, time.Nanosecond, j)
	}
}

func TestFullJitterBackoff(t *testing.T) {
	ms := time.Millisecond
	b := retry.NewFullJitterBackoff(100*ms, time.Second)
	b.SetRand(func() float64 { return 0.5 })
	for i, want := range []time.Duration{50 * ms, 100 * ms, 200 * ms, 400 * ms, 500 * ms, 500 * ms} {
		if got := b.Delay(i + 1); got != want {
			t.Errorf("Delay(%d): got %v, want %v", i+1, got, want)
		}
	}
	b.SetRand(func() float64 { return 0 })
	if got := b.Delay(3); got != 0 {
		t.Errorf("Delay(3) with a random 0: got %v, want 0", got)
	}
	const fn = "retry.NewFullJitterBackoff: "
	for _, bad := range []struct {
		name     string
		min, max time.Duration
		want     string
	}{
		{"MaxLessThanMin", 2 * ms, ms, fn + "max must not be less than min, got min 2ms and max 1ms"},
		{"MaxZero", 0, 0, fn + "max must not be zero"},
		{"MinNegative", -ms, ms, fn + "min must not be negative, got -1ms"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			towertest.Panics(t, bad.want, func() { retry.NewFullJitterBackoff(bad.min, bad.max) })
		})
	}
}

// The base at its edges: exactly max>>it for min is not above the cap, so
// it doubles (1ns, 3ns: attempt 2 is 2ns, not the cap 3ns); and a min of 0
// stays 0 however many attempts, where the cap used to come back from the
// 64th on.
func TestExponentialBaseEdges(t *testing.T) {
	for _, tt := range []struct {
		min, max time.Duration
		attempt  int
		want     time.Duration
	}{
		{1, 3, 2, 2},
		{1, 3, 3, 3},
		{0, time.Second, 63, 0},
		{0, time.Second, 64, 0},
		{0, time.Second, 1000, 0},
		{1, time.Second, 64, time.Second},
	} {
		b := retry.NewExponentialBackoff(tt.min, tt.max, 0)
		if got := b.Base(tt.attempt); got != tt.want {
			t.Errorf("min %v, max %v, attempt %d: base %v, want %v", tt.min, tt.max, tt.attempt, got, tt.want)
		}
	}
}

// A caller's deadline that is still ahead after the backoff lets the next
// attempt go: the first attempt fails at once, the backoff is 10ms, the
// deadline a second away, and the second attempt answers at 10ms.
func TestRetryWithinDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		svc := retry.New[int, int](tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) {
			calls++
			if calls == 1 {
				return 0, errors.New("boom")
			}
			return req, nil
		}), retry.NewPolicy[int, int](retry.AnyError,
			retry.WithBackoff(retry.NewExponentialBackoff(10*time.Millisecond, 10*time.Millisecond, 0))))
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		if got, err := tower.Call(ctx, tower.Service[int, int](svc), 7); got != 7 || err != nil {
			t.Fatalf("got %v, %v; want 7, nil", got, err)
		}
		if elapsed := time.Since(start); calls != 2 || elapsed != 10*time.Millisecond {
			t.Errorf("%d calls in %v, want 2 in 10ms", calls, elapsed)
		}
	})
}

// A caller that gives up during the backoff gets its ctx's error, and no
// further attempt is sent, though the inner service would take one at once.
func TestRetryCancelledDuringBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		svc := retry.New[int, int](tower.ServiceFunc[int, int](func(context.Context, int) (int, error) {
			calls++
			return 0, errors.New("boom")
		}), retry.NewPolicy[int, int](retry.AnyError,
			retry.WithBackoff(retry.NewExponentialBackoff(10*time.Millisecond, 10*time.Millisecond, 0))))
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(5*time.Millisecond, cancel)
		if _, err := tower.Call(ctx, tower.Service[int, int](svc), 7); err != context.Canceled {
			t.Errorf("got %v, want %v", err, context.Canceled)
		}
		if calls != 1 {
			t.Errorf("%d attempts, want 1: none after the caller gave up", calls)
		}
	})
}
