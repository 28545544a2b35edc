package towerredis

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerredis/internal/mono"
	"github.com/towergo/tower/towerredis/redistest"
)

// A caller without a deadline reserves up to max(burst*interval,
// MinReserve) ahead; one with a deadline, up to the time left to it, at
// most that; one past its deadline, nothing.
func TestBucketBudget(t *testing.T) {
	c := newClient(t, closedPort(t)) // never dialled
	for _, tt := range []struct {
		num      int
		per      time.Duration
		burst    int
		deadline time.Duration // from now; 0 is none
		want     time.Duration
	}{
		{1, time.Second, 1, 0, time.Second},                                  // span 1s
		{10, time.Second, 5, 0, MinReserve},                                  // span 500ms: MinReserve
		{1, time.Second, 5, 0, 5 * time.Second},                              // span 5s
		{3, time.Second, 10, 0, 3_333_340 * time.Microsecond},                // 10 tokens of 333,334µs
		{1, time.Second, 5, 2 * time.Second, 2 * time.Second},                // the deadline first
		{1, time.Second, 5, 5*time.Second + 1, 5 * time.Second},              // the span first
		{10, time.Second, 5, 1500 * time.Millisecond, MinReserve},            // MinReserve first
		{10, time.Second, 5, 700 * time.Millisecond, 700 * time.Millisecond}, // the deadline, below MinReserve
		{1, time.Second, 5, -time.Second, 0},                                 // past the deadline
	} {
		b := newGCRA("test", c, "budget", tt.num, tt.per, tt.burst, bucketOptions("test", nil))
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			if tt.deadline != 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, time.Now().Add(tt.deadline))
				defer cancel()
			}
			if got := b.budget(ctx); got != tt.want {
				t.Errorf("%d per %v, burst %d, deadline in %v: budget %v, want %v", tt.num, tt.per, tt.burst, tt.deadline, got, tt.want)
			}
		})
	}
}

// sleepUntil returns at once, reporting nothing to the sink, for an
// instant already come (due now included); otherwise it reports Waiting
// and sleeps until the instant, or until ctx ends.
func TestSleepUntil(t *testing.T) {
	for _, tt := range []struct {
		due     time.Duration // from now
		done    bool          // ctx already ended
		want    bool
		waiting int64         // Waiting reported
		slept   time.Duration // fake time elapsed
	}{
		{-time.Second, false, true, 0, 0},
		{-1, false, true, 0, 0},
		{0, false, true, 0, 0},
		{0, true, true, 0, 0}, // due now: the caller's, even with ctx done
		{1, false, true, 1, 1},
		{3 * time.Second, false, true, 1, 3 * time.Second},
		{3 * time.Second, true, false, 1, 0},
	} {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.done {
				cancel()
			}
			var (
				counts metrics.Counts
				w      watch
			)
			start := mono.Now()
			got := sleepUntil(ctx, start+tt.due, &w, &counts, nothing)
			slept := mono.Now() - start
			if got != tt.want || counts.Get(metrics.Waiting) != tt.waiting || slept != tt.slept {
				t.Errorf("due in %v, ctx done %v: got %v, Waiting %d, slept %v; want %v, %d, %v",
					tt.due, tt.done, got, counts.Get(metrics.Waiting), slept, tt.want, tt.waiting, tt.slept)
			}
			w.done(&counts, nothing)
			if n := counts.Get(metrics.Waiting); n != 0 {
				t.Errorf("due in %v: Waiting = %d after done, want 0", tt.due, n)
			}
		})
	}
}

// A caller without a deadline whose next token is further than it may
// reserve (burst*interval, 10s here) reserves nothing: it sleeps until
// the token and asks again, and gets it then, in a second round trip,
// taking it from the bucket. A token within reach is reserved in one
// round trip and slept for. Exact instants on synctest's clock, which the
// script reads.
func TestBucketTakeBeyondReserve(t *testing.T) {
	srv := redistest.Start(t)
	for i, tt := range []struct {
		tat   time.Duration // the key's tat, from now: with a burst of 1, the next token's instant
		trips int64
	}{
		{10 * time.Second, 1},                  // within reach: reserved
		{10*time.Second + time.Microsecond, 2}, // 1µs beyond
		{20 * time.Second, 2},
		{35 * time.Second, 2},
	} {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var trips int64
			observe := func(RoundTrip) {
				// A caller that asks again at once, with time standing
				// still, would ask forever: stop it.
				if trips++; trips > 5 {
					cancel()
				}
			}
			c := bubbleClient(t, srv.Addr())
			r := NewBucket[string, string](okService, c, "beyond"+strconv.Itoa(i), 1, 10*time.Second, 1, WithObserver(observe), WithTimeout(time.Second))
			r.b.clock = bubbleNow
			now := bubbleNow()
			tat := now + int64(tt.tat/time.Microsecond)
			if err := c.Set(t.Context(), r.Key(), tat, 0).Err(); err != nil {
				t.Fatal(err)
			}
			start := mono.Now()
			p, err := r.Ready(ctx)
			if err != nil {
				t.Fatalf("tat in %v: Ready: %v, want the token at its instant", tt.tat, err)
			}
			defer p.Call(t.Context(), "x")
			if took := mono.Now() - start; took != tt.tat || trips != tt.trips {
				t.Errorf("tat in %v: Ready took %v in %d round trips, want %v in %d", tt.tat, took, trips, tt.tat, tt.trips)
			}
			// The token was taken: the bucket's tat is one interval later.
			got, err := c.Get(t.Context(), r.Key()).Int64()
			if want := tat + 10_000_000; err != nil || got != want {
				t.Errorf("tat in %v: the key holds %d (%v), want %d: the token taken", tt.tat, got, err, want)
			}
		})
	}
}

// A Keyed's Call reserves its key's next token only if it is due
// before the ctx's deadline, to the microsecond, as well as within the
// max wait: here the next token is 10s away and the max wait a minute.
func TestKeyedDeadlineBoundsWait(t *testing.T) {
	srv := redistest.Start(t)
	for i, tt := range []struct {
		deadline time.Duration // from the Call; 0 is none
		served   bool
	}{
		{0, true},
		{time.Minute, true},
		{10*time.Second + time.Microsecond, true},
		{10*time.Second - time.Microsecond, false},
		{time.Second, false},
	} {
		synctest.Test(t, func(t *testing.T) {
			inner := &counting{}
			r := NewKeyed[string, string](inner, bubbleClient(t, srv.Addr()), "deadline"+strconv.Itoa(i),
				func(s string) string { return s }, 1, 10*time.Second, 1, WithMaxWait(time.Minute), WithTimeout(time.Second))
			r.b.clock = bubbleNow
			if _, err := tower.Call[string, string](t.Context(), r, "k"); err != nil {
				t.Fatalf("the burst's token: %v", err)
			}
			ctx := t.Context()
			if tt.deadline != 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			start := mono.Now()
			_, err := tower.Call[string, string](ctx, r, "k")
			took := mono.Now() - start
			var le *limit.KeyLimitError
			switch {
			case tt.served && (err != nil || took != 10*time.Second):
				t.Errorf("deadline in %v: %v after %v, want served at the token, after 10s", tt.deadline, err, took)
			case !tt.served && (!errors.As(err, &le) || le.Wait != 10*time.Second || took != 0):
				t.Errorf("deadline in %v: %v after %v, want refused at once, the next token in 10s", tt.deadline, err, took)
			}
			if o := inner.outstanding.Load(); o != 0 {
				t.Errorf("deadline in %v: %d inner permits outstanding, want 0", tt.deadline, o)
			}
		})
	}
}

// A FailClosed Keyed whose Redis does not answer refuses at once, after
// one round trip, whatever its max wait, with an *UnreachableError that
// wraps the round trip's error; the inner service is not called.
func TestKeyedFailClosedAtOnce(t *testing.T) {
	addr := closedPort(t)
	for _, maxWait := range []time.Duration{0, 100 * time.Millisecond, time.Hour} {
		synctest.Test(t, func(t *testing.T) {
			start := mono.Now()
			var tries []time.Duration
			observe := func(rt RoundTrip) {
				if rt.Err != nil {
					tries = append(tries, mono.Now()-start)
				}
			}
			inner := &counting{}
			r := NewKeyed[string, string](inner, bubbleClient(t, addr), "down", func(s string) string { return s },
				1, time.Second, 1, WithFailMode(FailClosed), WithMaxWait(maxWait), WithTimeout(time.Second), WithObserver(observe))
			_, err := tower.Call[string, string](t.Context(), r, "k")
			took := mono.Now() - start
			var ue *UnreachableError
			if !errors.As(err, &ue) || ue.Name != "down" || ue.Err == nil || !errors.Is(err, ErrUnreachable) {
				t.Errorf("max wait %v: %v, want an UnreachableError of limit down with the round trip's error", maxWait, err)
			}
			if !slices.Equal(tries, []time.Duration{0}) || took != 0 {
				t.Errorf("max wait %v: round trips at %v, refused at %v; want one at 0, refused at 0", maxWait, tries, took)
			}
			if n := inner.calls.Load(); n != 0 {
				t.Errorf("max wait %v: the inner service got %d calls, want 0", maxWait, n)
			}
		})
	}
}
