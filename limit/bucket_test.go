package limit_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towertest"
)

// countNow takes every token svc grants now, with a done ctx, using each,
// and returns how many it got (at most 1000).
func countNow(t *testing.T, svc svc) int {
	t.Helper()
	n := 0
	for ; n < 1000; n++ {
		p, ok := towertest.ReadyNow(t, svc)
		if !ok {
			break
		}
		echoCall(t, p, "now")
	}
	return n
}

// sleepUntil sleeps until at after start and lets the bubble settle.
func sleepUntil(start time.Time, at time.Duration) {
	time.Sleep(time.Until(start.Add(at)))
	synctest.Wait()
}

// Burst 3 at 10 per second: three go through at once at 0ms, the 4th at
// exactly 100ms and the 5th at exactly 200ms, each woken by the timer at
// its token's instant. 300ms after the last token was taken the bucket is
// full again, with 3 tokens and not more: the 4th waits 100ms.
func TestBucketBurstThenOneEveryInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := limit.NewBucket(echo, 10, time.Second, 3)
		start := time.Now()
		wait := callAll(t, b, start, "a", "b", "c", "d", "e")
		if got, want := fmt.Sprint(wait()), "[0s 0s 0s 100ms 200ms]"; got != want {
			t.Errorf("answered at %s, want %s", got, want)
		}
		sleepUntil(start, 500*time.Millisecond)
		wait = callAll(t, b, start, "f", "g", "h", "i")
		if got, want := fmt.Sprint(wait()), "[500ms 500ms 500ms 600ms]"; got != want {
			t.Errorf("after 300ms idle: answered at %s, want %s", got, want)
		}
	})
}

// The bucket refills one token every interval, exactly at the interval's
// end, and holds burst tokens at most however long it is left idle.
func TestBucketRefillsToBurstAndNoMore(t *testing.T) {
	for _, tt := range []struct {
		name string
		at   time.Duration // after three tokens were taken at 0
		want int           // tokens there then
		next time.Duration // the instant of the next token
	}{
		{"At99ms", 99 * time.Millisecond, 0, 100 * time.Millisecond},
		{"At100ms", 100 * time.Millisecond, 1, 200 * time.Millisecond},
		{"At299ms", 299 * time.Millisecond, 2, 300 * time.Millisecond},
		{"At300ms", 300 * time.Millisecond, 3, 400 * time.Millisecond},
		{"At301ms", 301 * time.Millisecond, 3, 401 * time.Millisecond},
		{"After1h", time.Hour, 3, time.Hour + 100*time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := limit.NewBucket(echo, 10, time.Second, 3)
				start := time.Now()
				if n := countNow(t, b); n != 3 {
					t.Fatalf("a new bucket gave %d tokens at once, want 3 (full)", n)
				}
				sleepUntil(start, tt.at)
				if n := countNow(t, b); n != tt.want {
					t.Errorf("at %v: got %d tokens, want %d", tt.at, n, tt.want)
				}
				// The next caller waits for the next token, an interval on.
				r := towertest.GoRequest(t.Context(), svc(b), "x")
				r.ExpectValue(t, "x")
				if got := r.Since(start); got != tt.next {
					t.Errorf("next caller answered at %v, want %v", got, tt.next)
				}
			})
		})
	}
}

// Waiters are served in arrival order, one per token, each at the exact
// instant of its token.
func TestBucketWaitersFIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := limit.NewBucket(echo, 10, time.Second, 1)
		start := time.Now()
		callNow(t, b, "now")
		rs := make([]*towertest.Outcome[permit], 5)
		for i := range rs {
			rs[i] = towertest.GoReady(t.Context(), b)
		}
		for _, step := range []struct {
			at       time.Duration
			finished int // waiters served by then, oldest first
		}{{99 * time.Millisecond, 0}, {100 * time.Millisecond, 1}, {299 * time.Millisecond, 2}, {300 * time.Millisecond, 3}, {500 * time.Millisecond, 5}} {
			sleepUntil(start, step.at)
			for i, r := range rs {
				if got, want := r.Done(), i < step.finished; got != want {
					t.Fatalf("at %v: waiter %d finished = %t, want %t", step.at, i, got, want)
				}
			}
		}
		for i, r := range rs {
			want := time.Duration(i+1) * 100 * time.Millisecond
			if echoCall(t, r.Value(t), "x"); r.Since(start) != want {
				t.Errorf("waiter %d served at %v, want %v", i, r.Since(start), want)
			}
		}
	})
}

// A done ctx is the "ready now?" probe: granted, without asking anything
// of the ctx, when a token is there; refused at once with ctx.Err() when
// none is, without waiting or asking the inner service.
func TestBucketProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := &countReady{svc: echo}
		b := limit.NewBucket[string, string](inner, 10, time.Second, 1)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		p, err := b.Ready(ctx)
		if err != nil {
			t.Fatalf("probe with a token there: got %v, want a permit", err)
		}
		echoCall(t, p, "a")
		start := time.Now()
		if _, err := b.Ready(ctx); err != context.Canceled {
			t.Fatalf("probe with no token: got %v, want %v unchanged", err, context.Canceled)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("probe with no token returned after %v, want at once", d)
		}
		if n := inner.n.Load(); n != 1 {
			t.Errorf("inner service asked %d times, want 1: a refused probe must not ask it", n)
		}
		sleepUntil(start, 99*time.Millisecond)
		if n := countNow(t, b); n != 0 {
			t.Errorf("at 99ms: %d tokens, want 0", n)
		}
		sleepUntil(start, 100*time.Millisecond)
		if n := countNow(t, b); n != 1 {
			t.Errorf("at 100ms: %d tokens, want 1", n)
		}
	})
}

// A caller that finds a token there while others wait does not take it:
// the token at 100ms is the waiter's, whether the timer has handed it over
// yet or not, and a caller arriving then waits for the next one.
func TestBucketNoQueueJumping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := limit.NewBucket(echo, 10, time.Second, 1)
		start := time.Now()
		callNow(t, b, "now")
		first := towertest.GoReady(t.Context(), b)
		time.Sleep(100 * time.Millisecond) // wakes as the timer fires, in either order
		if p, ok := towertest.ReadyNow(t, b); ok {
			p.Release()
			t.Fatal("a probe at 100ms took the waiter's token")
		}
		second := towertest.GoReady(t.Context(), b)
		echoCall(t, first.Value(t), "first")
		echoCall(t, second.Value(t), "second")
		if first.Since(start) != 100*time.Millisecond || second.Since(start) != 200*time.Millisecond {
			t.Errorf("served at %v and %v, want 100ms and 200ms", first.Since(start), second.Since(start))
		}
	})
}

// A waiter whose ctx ends returns ctx.Err() at that instant and takes
// nothing: the waiters behind it get the tokens at their instants, as if
// it had never come.
func TestBucketCancelledWaiterTakesNothing(t *testing.T) {
	for _, tt := range []struct {
		name     string
		cancelAt int // the waiter, of three, whose ctx ends at 50ms
	}{{"Head", 0}, {"Middle", 1}, {"Last", 2}} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := &countReady{svc: echo}
				b := limit.NewBucket[string, string](inner, 10, time.Second, 1)
				start := time.Now()
				callNow(t, b, "now")
				ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
				defer cancel()
				var rs []*towertest.Outcome[permit]
				for i := range 3 {
					c := t.Context()
					if i == tt.cancelAt {
						c = ctx
					}
					rs = append(rs, towertest.GoReady(c, b))
				}
				gone := rs[tt.cancelAt]
				if _, err := gone.Wait(); err != context.DeadlineExceeded || gone.Since(start) != 50*time.Millisecond {
					t.Fatalf("cancelled waiter: got %v at %v, want %v at 50ms", err, gone.Since(start), context.DeadlineExceeded)
				}
				want := 100 * time.Millisecond
				for i, r := range rs {
					if i == tt.cancelAt {
						continue
					}
					if echoCall(t, r.Value(t), "x"); r.Since(start) != want {
						t.Errorf("waiter %d served at %v, want %v", i, r.Since(start), want)
					}
					want += 100 * time.Millisecond
				}
				if n := inner.n.Load(); n != 3 {
					t.Errorf("inner service asked %d times, want 3: the cancelled waiter must not ask it", n)
				}
				if n := countNow(t, b); n != 0 {
					t.Errorf("at %v: %d tokens left, want 0", time.Since(start), n)
				}
			})
		})
	}
}

// A waiter whose ctx ends at the very instant its token comes either gets
// the token or leaves without it: there is exactly one token at 100ms,
// held by the waiter or left in the bucket.
func TestBucketGrantAsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := limit.NewBucket(echo, 10, time.Second, 1)
		callNow(t, b, "now")
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		p, err := b.Ready(ctx)
		if err == nil {
			if _, ok := towertest.ReadyNow(t, b); ok {
				t.Fatal("the waiter was granted the token and the bucket had one more")
			}
			p.Release() // back to the bucket
		} else if err != context.DeadlineExceeded {
			t.Fatalf("Ready: got %v, want a permit or %v", err, context.DeadlineExceeded)
		}
		if n := countNow(t, b); n != 1 {
			t.Errorf("got %d tokens at 100ms, want 1", n)
		}
	})
}

// A permit released unused gives its token to the oldest waiter at once,
// not to the bucket; the next waiter gets its token an interval after
// that, as if the released token had never been taken and the first
// waiter had taken it at the release.
func TestBucketReleaseToOldestWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := limit.NewBucket(echo, 10, time.Second, 1)
		start := time.Now()
		p := towertest.MustReady(t, b)
		first := towertest.GoReady(t.Context(), b)
		second := towertest.GoReady(t.Context(), b)
		sleepUntil(start, 20*time.Millisecond)
		p.Release()
		synctest.Wait()
		if !first.Done() || second.Done() {
			t.Fatalf("after one release: got first %t, second %t finished; want true, false", first.Done(), second.Done())
		}
		if n := countNow(t, b); n != 0 {
			t.Errorf("the released token went to the bucket too: %d tokens at 20ms, want 0", n)
		}
		echoCall(t, first.Value(t), "a")
		if first.Since(start) != 20*time.Millisecond {
			t.Errorf("first waiter served at %v, want 20ms", first.Since(start))
		}
		echoCall(t, second.Value(t), "b")
		if second.Since(start) != 120*time.Millisecond {
			t.Errorf("second waiter served at %v, want 120ms", second.Since(start))
		}
	})
}

// A permit released unused with nobody waiting gives its token to the
// bucket, which never holds more than burst, if no token was taken after
// it: released the last taken first, both permits give their tokens back;
// in the order taken, the first one's is lost, since the second holds the
// instant after it.
func TestBucketReleaseToBucket(t *testing.T) {
	for _, tt := range []struct {
		name    string
		at      time.Duration // when both permits, taken at 0, are released
		inOrder bool          // the first taken released first
		want    int           // tokens there then
	}{
		{"AtOnce", 0, false, 2},
		{"At50ms", 50 * time.Millisecond, false, 2},   // one earned, two back: 2, not 3
		{"At250ms", 250 * time.Millisecond, false, 2}, // full already: 2, not 4
		{"AtOnceInOrder", 0, true, 1},
		{"At50msInOrder", 50 * time.Millisecond, true, 1}, // half a token earned
		{"At100msInOrder", 100 * time.Millisecond, true, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := limit.NewBucket(echo, 10, time.Second, 2)
				start := time.Now()
				p1, p2 := towertest.MustReady(t, b), towertest.MustReady(t, b)
				sleepUntil(start, tt.at)
				if tt.inOrder {
					p1.Release()
					p2.Release()
				} else {
					p2.Release()
					p1.Release()
				}
				if n := countNow(t, b); n != tt.want {
					t.Errorf("got %d tokens, want %d", n, tt.want)
				}
			})
		})
	}
	t.Run("One", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := limit.NewBucket(echo, 10, time.Second, 2)
			start := time.Now()
			p1, p2 := towertest.MustReady(t, b), towertest.MustReady(t, b)
			defer p1.Release()
			sleepUntil(start, 50*time.Millisecond)
			p2.Release() // the last taken: its token goes back
			if n := countNow(t, b); n != 1 {
				t.Errorf("at 50ms, the second of two permits released: got %d tokens, want 1", n)
			}
			sleepUntil(start, 100*time.Millisecond)
			if n := countNow(t, b); n != 1 {
				t.Errorf("at 100ms: got %d tokens, want 1", n)
			}
			sleepUntil(start, 199*time.Millisecond)
			if n := countNow(t, b); n != 0 {
				t.Errorf("at 199ms: got %d tokens, want 0 (the next is at 200ms)", n)
			}
		})
	})
}
