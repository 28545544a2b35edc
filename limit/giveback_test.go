package limit_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towertest"
)

// The key's first waiter gives up between two others: its token is not
// handed to a newcomer, since the waiter behind it already holds the next
// instant. Before, the give-up moved the key's state back one interval
// and the newcomer was served at 200ms beside the second waiter.
func TestKeyedGiveUpBetweenWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := limit.NewKeyed[string, string](echo, ident, 10, time.Second, 1, limit.WithMaxWait(time.Hour))
		start := time.Now()
		first := towertest.GoRequest(t.Context(), svc(k), "a") // 0ms: the burst's token
		time.Sleep(10 * time.Millisecond)
		ctx1, cancel1 := context.WithCancel(t.Context())
		gaveUp := towertest.GoRequest(ctx1, svc(k), "a") // 10ms: due at 100ms
		time.Sleep(10 * time.Millisecond)
		second := towertest.GoRequest(t.Context(), svc(k), "a") // 20ms: due at 200ms
		time.Sleep(30 * time.Millisecond)
		cancel1() // 50ms
		time.Sleep(10 * time.Millisecond)
		newcomer := towertest.GoRequest(t.Context(), svc(k), "a") // 60ms
		gaveUp.ExpectError(t, context.Canceled)
		for _, c := range []struct {
			name string
			r    *towertest.Outcome[string]
			want time.Duration
		}{{"first", first, 0}, {"second", second, 200 * time.Millisecond}, {"newcomer", newcomer, 300 * time.Millisecond}} {
			if c.r.ExpectValue(t, "a"); c.r.Since(start) != c.want {
				t.Errorf("%s served at %v, want %v", c.name, c.r.Since(start), c.want)
			}
		}
	})
}

// Two waiters give up in the middle of four: each token after theirs is
// held, so theirs are lost, and every request of the key is served a
// whole interval after the one before.
func TestKeyedTwoGiveUpsInTheMiddle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := limit.NewKeyed[string, string](echo, ident, 10, time.Second, 1, limit.WithMaxWait(time.Hour))
		start := time.Now()
		callNow(t, k, "a") // 0ms
		ctx, cancel := context.WithCancel(t.Context())
		g1 := towertest.GoRequest(ctx, svc(k), "a") // due 100ms
		g2 := towertest.GoRequest(ctx, svc(k), "a") // due 200ms
		last := towertest.GoRequest(t.Context(), svc(k), "a")
		time.Sleep(50 * time.Millisecond)
		cancel()
		n1 := towertest.GoRequest(t.Context(), svc(k), "a")
		n2 := towertest.GoRequest(t.Context(), svc(k), "a")
		g1.ExpectError(t, context.Canceled)
		g2.ExpectError(t, context.Canceled)
		for i, r := range []*towertest.Outcome[string]{last, n1, n2} {
			if want := time.Duration(300+100*i) * time.Millisecond; r.Value(t) != "a" || r.Since(start) != want {
				t.Errorf("request %d served at %v, want %v", i, r.Since(start), want)
			}
		}
	})
}

// The last waiter to reserve gives up: nobody holds a later token, so its
// token goes back, and the next caller is served at its instant.
func TestKeyedLastWaiterGivesBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := limit.NewKeyed[string, string](echo, ident, 10, time.Second, 1, limit.WithMaxWait(time.Hour))
		start := time.Now()
		callNow(t, k, "a") // 0ms
		ctx, cancel := context.WithCancel(t.Context())
		g := towertest.GoRequest(ctx, svc(k), "a") // due 100ms
		time.Sleep(50 * time.Millisecond)
		cancel()
		g.ExpectError(t, context.Canceled)
		r := towertest.GoRequest(t.Context(), svc(k), "a")
		if r.ExpectValue(t, "a"); r.Since(start) != 100*time.Millisecond {
			t.Errorf("served at %v, want 100ms", r.Since(start))
		}
	})
}

// A permit released unused after a later token was taken and used does
// not give its token back: the next token is a whole interval after the
// later one. Before, the release handed the next caller the later
// token's instant: two requests 0ms apart with burst 1.
func TestBucketReleaseAfterLaterTake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := limit.NewBucket(echo, 10, time.Second, 1)
		start := time.Now()
		held := towertest.MustReady(t, b) // 0ms: the burst's token
		time.Sleep(100 * time.Millisecond)
		callNow(t, b, "x") // 100ms
		waiter := towertest.GoRequest(t.Context(), svc(b), "y")
		time.Sleep(20 * time.Millisecond)
		held.Release() // 120ms: a token was taken after it
		if waiter.ExpectValue(t, "y"); waiter.Since(start) != 200*time.Millisecond {
			t.Errorf("the waiter was served at %v, want 200ms", waiter.Since(start))
		}
	})
}

// A permit released unused hands its token to a waiter only as a take
// at the release's instant would: the waiter is served then, and the
// next token is an interval after it. Before, the waiter took the token
// and the bucket kept its state, so the next caller was served 50ms
// after the waiter with burst 1.
func TestBucketReleaseToWaiterSpacesTheNext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := limit.NewBucket(echo, 10, time.Second, 1)
		start := time.Now()
		held := towertest.MustReady(t, b) // 0ms
		waiter := towertest.GoRequest(t.Context(), svc(b), "w")
		time.Sleep(50 * time.Millisecond)
		held.Release() // 50ms: the last token taken, so it goes back
		if waiter.ExpectValue(t, "w"); waiter.Since(start) != 50*time.Millisecond {
			t.Errorf("the waiter was served at %v, want 50ms", waiter.Since(start))
		}
		next := towertest.GoRequest(t.Context(), svc(b), "n")
		if next.ExpectValue(t, "n"); next.Since(start) != 150*time.Millisecond {
			t.Errorf("the next was served at %v, want 150ms", next.Since(start))
		}
	})
}
