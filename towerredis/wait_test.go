package towerredis_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerredis"
	"github.com/towergo/tower/towerredis/redistest"
)

// A caller without a deadline whose next token is further than it may
// reserve (max(burst*interval, MinReserve), 1s here) reserves nothing: it
// sleeps until the token and asks again, and gets it then, in a second
// round trip, taking it from the bucket. A token within reach is reserved
// in one round trip and slept for. On Redis's clock: the key's tat is set
// 300ms ahead of it, well within reach, or 1.3s ahead, well beyond, and
// the token is never had before its instant.
func TestBucketTakeBeyondReserve(t *testing.T) {
	t.Parallel() // it waits on the real clock: beside the other such tests
	const I = int64(time.Second / time.Microsecond)
	srv := redistest.Start(t)
	g := &together{t: t}
	defer g.wait()
	for _, tt := range []struct {
		name  string
		tat   time.Duration // the key's tat, from now: with a burst of 1, the next token's instant
		trips int64
	}{
		{"WithinReach", 300 * time.Millisecond, 1},
		{"Beyond", 1300 * time.Millisecond, 2},
	} {
		g.run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			var rt trips
			c := newClient(t, srv.Addr())
			r := towerredis.NewBucket[string, string](okService, c, t.Name(), 1, time.Second, 1,
				towerredis.WithObserver(rt.Observe), towerredis.WithTimeout(time.Second))
			start := time.Now()
			tat := redisNow(t, c) + int64(tt.tat/time.Microsecond)
			if err := c.Set(ctx, r.Key(), tat, 0).Err(); err != nil {
				t.Fatal(err)
			}
			p, err := r.Ready(ctx)
			if err != nil {
				t.Fatalf("Ready: %v, want the token at its instant", err)
			}
			defer p.Call(ctx, "x")
			within(t, "Ready", time.Since(start), tt.tat, tt.tat+late)
			if n := rt.N.Load(); n != tt.trips {
				t.Errorf("Ready took %d round trips, want %d", n, tt.trips)
			}
			// The token was taken: the bucket's tat is one interval after
			// the token's instant, or after the ask that took it, a round
			// trip past the instant.
			got, err := c.Get(ctx, r.Key()).Int64()
			if want := tat + I; err != nil || got < want || got > want+int64(late/time.Microsecond) {
				t.Errorf("the key holds %d (%v), want %d, or up to %v later: the token taken", got, err, want, late)
			}
		})
	}
}

// A Keyed's Call reserves its key's next token only if it is due before
// the ctx's deadline, as well as within the max wait: here the next token
// is 1s away, the max wait a minute, and the deadlines half a second or
// more from the token's instant, either way.
func TestKeyedDeadlineBoundsWait(t *testing.T) {
	t.Parallel() // it waits on the real clock: beside the other such tests
	srv := redistest.Start(t)
	g := &together{t: t}
	defer g.wait()
	for _, tt := range []struct {
		name     string
		deadline time.Duration // from the Call; 0 is none
		served   bool
	}{
		{"NoDeadline", 0, true},
		{"AMinute", time.Minute, true},
		{"AfterTheToken", 1500 * time.Millisecond, true},
		{"BeforeTheToken", 500 * time.Millisecond, false},
	} {
		g.run(tt.name, func(t *testing.T) {
			inner := &counting{}
			r := towerredis.NewKeyed[string, string](inner, newClient(t, srv.Addr()), t.Name(),
				func(s string) string { return s }, 1, time.Second, 1, towerredis.WithMaxWait(time.Minute), towerredis.WithTimeout(time.Second))
			start := time.Now()
			if _, err := tower.Call[string, string](t.Context(), r, "k"); err != nil {
				t.Fatalf("the burst's token: %v", err)
			}
			ctx := t.Context()
			if tt.deadline != 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			_, err := tower.Call[string, string](ctx, r, "k")
			took := time.Since(start)
			var le *limit.KeyLimitError
			switch {
			case tt.served && (err != nil || took < time.Second || took > time.Second+late):
				t.Errorf("deadline in %v: %v after %v, want served at the token, after 1s", tt.deadline, err, took)
			case !tt.served && (!errors.As(err, &le) || le.Wait > time.Second || le.Wait < time.Second-late || took > late):
				t.Errorf("deadline in %v: %v after %v, want refused at once, the next token in 1s", tt.deadline, err, took)
			}
			if o := inner.Outstanding.Load(); o != 0 {
				t.Errorf("deadline in %v: %d inner permits outstanding, want 0", tt.deadline, o)
			}
		})
	}
}

// A FailClosed Keyed whose Redis does not answer refuses at once, after
// one round trip, whatever its max wait, with an *UnreachableError that
// wraps the round trip's error; the inner service is not called. Nothing
// answers, so no clock but the bubble's is read.
func TestKeyedFailClosedAtOnce(t *testing.T) {
	addr := closedPort(t)
	for _, maxWait := range []time.Duration{0, 100 * time.Millisecond, time.Hour} {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			var tries []time.Duration
			observe := func(rt towerredis.RoundTrip) {
				if rt.Err != nil {
					tries = append(tries, time.Since(start))
				}
			}
			inner := &counting{}
			r := towerredis.NewKeyed[string, string](inner, bubbleClient(t, addr), "down", func(s string) string { return s },
				1, time.Second, 1, towerredis.WithFailMode(towerredis.FailClosed), towerredis.WithMaxWait(maxWait),
				towerredis.WithTimeout(time.Second), towerredis.WithObserver(observe))
			_, err := tower.Call[string, string](t.Context(), r, "k")
			took := time.Since(start)
			var ue *towerredis.UnreachableError
			if !errors.As(err, &ue) || ue.Name != "down" || ue.Err == nil || !errors.Is(err, towerredis.ErrUnreachable) {
				t.Errorf("max wait %v: %v, want an UnreachableError of limit down with the round trip's error", maxWait, err)
			}
			if !slices.Equal(tries, []time.Duration{0}) || took != 0 {
				t.Errorf("max wait %v: round trips at %v, refused at %v; want one at 0, refused at 0", maxWait, tries, took)
			}
			if n := inner.Calls.Load(); n != 0 {
				t.Errorf("max wait %v: the inner service got %d calls, want 0", maxWait, n)
			}
		})
	}
}

// The caller that asks Redis for a batch takes its first token and sleeps
// until it is due: a batch reserved ahead is not spent early. A bucket of
// 2 tokens, one every 500ms, batches of 2, on Redis's clock: the first
// batch is there now, the second is reserved, due 500ms and 1s later.
func TestBatchWaitsForFirstToken(t *testing.T) {
	t.Parallel() // it waits on the real clock: beside the other such tests
	srv := redistest.Start(t)
	var rt trips
	r := towerredis.NewBucket[string, string](okService, newClient(t, srv.Addr()), "fetch", 2, time.Second, 2,
		towerredis.WithBatch(2), towerredis.WithObserver(rt.Observe), towerredis.WithTimeout(time.Second))
	start := time.Now()
	for i, want := range []struct {
		at    time.Duration // after start
		trips int64
	}{{0, 1}, {0, 1}, {500 * time.Millisecond, 2}, {time.Second, 2}} {
		p, err := r.Ready(t.Context())
		at := time.Since(start)
		if err != nil || rt.N.Load() != want.trips {
			t.Errorf("Ready %d = %v after %d round trips; want a token after %d", i, err, rt.N.Load(), want.trips)
		}
		within(t, fmt.Sprint("Ready ", i), at, want.at, want.at+late)
		if err == nil {
			p.Call(t.Context(), "x")
		}
	}
}

// The key's first waiter gives up between two others: its token is lost,
// since the waiter behind it holds the next instant, and a newcomer's
// next token is an interval after that waiter's. Before, the give-up
// moved the key's tat back one interval, and the newcomer's token was the
// second waiter's instant, with burst 1. A token an hour, on Redis's
// clock: the newcomer, with a deadline too close for any token, is told
// its wait, 3h less the test's real time, where the bug would say 2h.
func TestKeyedGiveUpBetweenWaiters(t *testing.T) {
	srv := redistest.Start(t)
	var counts metrics.Counts
	inner := &counting{}
	r := towerredis.NewKeyed[string, string](inner, newClient(t, srv.Addr()), "between", func(k string) string { return k },
		1, time.Hour, 1, towerredis.WithMaxWait(24*time.Hour), towerredis.WithMetrics(&counts), towerredis.WithTimeout(time.Second))
	if _, err := tower.Call[string, string](t.Context(), r, "a"); err != nil {
		t.Fatalf("the burst's token: %v", err)
	}
	// wait starts a Call that waits for its reserved token until ctx ends,
	// and returns once it waits; the Call's error comes on the channel.
	wait := func(ctx context.Context, waiting int64) <-chan error {
		t.Helper()
		errs := make(chan error, 1)
		go func() {
			_, err := tower.Call[string, string](ctx, r, "a")
			errs <- err
		}()
		poll(t, fmt.Sprintf("waiter %d waits", waiting), func() bool { return counts.Get(metrics.Waiting) == waiting })
		return errs
	}
	ctx1, cancel1 := context.WithCancel(t.Context())
	defer cancel1()
	gaveUp := wait(ctx1, 1) // due in 1h
	ctx2, cancel2 := context.WithCancel(t.Context())
	defer cancel2()
	second := wait(ctx2, 2) // due in 2h
	cancel1()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("the waiter that gave up: %v, want %v", err, context.Canceled)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	_, err := tower.Call[string, string](ctx, r, "a")
	var le *limit.KeyLimitError
	if !errors.As(err, &le) || le.Wait > 3*time.Hour || le.Wait < 3*time.Hour-time.Minute {
		t.Errorf("a newcomer: %v, want refused, the next token in 3h: the given-up token lost", err)
	}
	cancel2()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Errorf("the second waiter: %v, want %v", err, context.Canceled)
	}
	if n, o := inner.Calls.Load(), inner.Outstanding.Load(); n != 1 || o != 0 {
		t.Errorf("inner service got %d calls, %d outstanding; want 1, 0", n, o)
	}
}
