package limit

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
)

// The count of queued callers, which lets Ready skip the lock while nobody
// waits, comes back to 0 however a wait ends: the caller's ctx ends, the
// timer grants it a token, a token given back unused goes to it, or the
// sink panics as the wait begins. A count left above 0 would send every
// later caller down the slow path.
func TestBucketQueuedComesBackToZero(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		echo := tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })
		b := NewBucket[int, int](echo, 10, time.Second, 1)
		queued := func(when string, want int32) {
			t.Helper()
			synctest.Wait()
			if got := int32(b.line.Len()); got != want {
				t.Errorf("%s: queued = %d, want %d", when, got, want)
			}
		}
		first, err := b.Ready(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		if _, err := b.Ready(ctx); err != context.DeadlineExceeded {
			t.Fatalf("Ready past its ctx: %v", err)
		}
		queued("after a waiter's ctx ended", 0)

		got := make(chan tower.Permit[int, int])
		wait := func() {
			go func() {
				p, _ := b.Ready(t.Context())
				got <- p
			}()
		}
		wait()
		queued("while one waits", 1)
		first.Release() // to the waiter
		second := <-got
		queued("after a token given back went to it", 0)

		wait()
		queued("while one waits", 1)
		second.Release()
		third := <-got // the token given back
		wait()
		fourth := <-got // at 100ms, from the timer
		queued("after the timer granted it", 0)
		third.Release()
		fourth.Release()

		bad := NewBucket[int, int](echo, 10, time.Second, 1, WithMetrics(panicOnWait{}))
		if _, err := bad.Ready(t.Context()); err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Error("the sink's panic did not reach the caller")
				}
			}()
			bad.Ready(t.Context())
		}()
		if got := int32(bad.line.Len()); got != 0 {
			t.Errorf("queued = %d after the sink panicked, want 0", got)
		}
	})
}

// A timer that fires before the oldest waiter's token is there, because a
// lock-free Ready took a token as the waiter queued, grants nothing and is
// set again: the waiter is served at its token's instant.
func TestBucketEarlyTimerIsSetAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		echo := tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })
		b := NewBucket[int, int](echo, 10, time.Second, 1)
		start := time.Now()
		if _, err := tower.Call(t.Context(), b, 1); err != nil {
			t.Fatal(err)
		}
		done := make(chan time.Duration)
		go func() {
			tower.Call(t.Context(), b, 2)
			done <- time.Since(start)
		}()
		synctest.Wait()                // queued, the timer set for 100ms
		b.tat.Add(int64(b.g.interval)) // a token taken without the lock
		if at := <-done; at != 200*time.Millisecond {
			t.Errorf("the waiter was served at %v, want 200ms", at)
		}
	})
}

// A token that is there while others wait is theirs: a probe is refused,
// and a caller with a live ctx queues behind them, handing it to the
// oldest waiter. Such a token is there only between its instant and the
// timer's run; the test puts it there by moving the bucket's state back,
// as the clock moving on would.
func TestBucketTokenThereWhileOthersWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		echo := tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })
		b := NewBucket[int, int](echo, 10, time.Second, 1)
		if _, err := tower.Call(t.Context(), b, 1); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		wait := func() <-chan time.Duration {
			done := make(chan time.Duration, 1)
			go func() {
				tower.Call(t.Context(), b, 2)
				done <- time.Since(start)
			}()
			synctest.Wait()
			return done
		}
		first := wait()
		b.tat.Add(-int64(b.g.interval)) // the token at 100ms is there now
		if _, ok, _ := tower.ReadyNow(b); ok {
			t.Fatal("a probe took the token of a caller waiting")
		}
		second := wait()
		select {
		case at := <-first:
			if at != 0 {
				t.Errorf("the first waiter was served at %v, want 0", at)
			}
		default:
			t.Fatal("the first waiter was not served when the second queued")
		}
		if at := <-second; at != 100*time.Millisecond {
			t.Errorf("the second waiter was served at %v, want 100ms", at)
		}
	})
}
