package sema

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/metrics"
)

// goAcquireWatched is goAcquire for AcquireWatched.
func goAcquireWatched(ctx context.Context, s *Sema, w metrics.Sink) *acquirer {
	return startAcquire(func() error { return s.AcquireWatched(ctx, w) })
}

// counter is a sink that keeps the number waiting.
type counter struct{ n atomic.Int64 }

func (c *counter) Add(k metrics.Kind, delta int64) {
	if k == metrics.Waiting {
		c.n.Add(delta)
	}
}
func (c *counter) Observe(time.Duration, metrics.Outcome) {}

// AcquireWatched counts a caller in Waiting from the moment it queues
// until it leaves the queue, granted, cancelled or closed out; a caller
// that finds a unit, or asks with a done ctx and finds none, never waits.
func TestAcquireWatched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c counter
		waiting := func(what string, want int64) {
			t.Helper()
			synctest.Wait()
			if got := c.n.Load(); got != want {
				t.Errorf("%s: got %d waiting, want %d", what, got, want)
			}
		}
		s := New(1)
		if err := s.AcquireWatched(t.Context(), &c); err != nil {
			t.Fatalf("AcquireWatched of a free unit: got %v, want nil", err)
		}
		waiting("a free unit", 0)
		done, cancel := context.WithCancel(t.Context())
		cancel()
		if err := s.AcquireWatched(done, &c); err != context.Canceled {
			t.Fatalf("AcquireWatched with a done ctx: got %v, want %v", err, context.Canceled)
		}
		waiting("a done ctx", 0)

		ctx, cancel := context.WithCancel(t.Context())
		a1 := goAcquireWatched(t.Context(), s, &c)
		a2 := goAcquireWatched(ctx, s, &c)
		a3 := goAcquireWatched(t.Context(), s, &c)
		waiting("three waiters", 3)
		cancel()
		if err := a2.result(); err != context.Canceled {
			t.Fatalf("cancelled waiter: got %v, want %v", err, context.Canceled)
		}
		waiting("one cancelled", 2)
		s.Release()
		if err := a1.result(); err != nil {
			t.Fatalf("granted waiter: got %v, want nil", err)
		}
		waiting("one granted", 1)
		closed := errors.New("closed")
		s.Close(closed)
		if err := a3.result(); err != closed {
			t.Fatalf("closed-out waiter: got %v, want %v", err, closed)
		}
		waiting("closed", 0)
	})
}

// panickyWatcher is a sink that panics on the Waiting delta it is told to.
type panickyWatcher struct{ on int64 }

func (p panickyWatcher) Add(k metrics.Kind, delta int64) {
	if k == metrics.Waiting && delta == p.on {
		panic("watcher")
	}
}
func (panickyWatcher) Observe(time.Duration, metrics.Outcome) {}

// A watcher that panics while a caller waits sends the panic up to that
// caller with nothing kept: the caller leaves the queue, and a unit it was
// granted goes back. Without that, the next unit released would go to a
// caller that is no longer there, and be lost.
func TestAcquireWatchedWatcherPanics(t *testing.T) {
	for _, on := range []int64{1, -1} {
		synctest.Test(t, func(t *testing.T) {
			s := New(1)
			if err := s.Acquire(t.Context()); err != nil {
				t.Fatal(err)
			}
			a := startAcquire(func() (err error) {
				defer func() {
					if v := recover(); v != "watcher" {
						err = fmt.Errorf("recovered %v, want the watcher's panic", v)
					}
				}()
				return s.AcquireWatched(t.Context(), panickyWatcher{on})
			})
			synctest.Wait()
			s.Release()
			if err := a.result(); err != nil {
				t.Fatalf("watcher panicking on %+d: %v", on, err)
			}
			if n := s.Available(); n != 1 {
				t.Errorf("watcher panicking on %+d: %d units free, want 1", on, n)
			}
			if n := s.Waiting(); n != 0 {
				t.Errorf("watcher panicking on %+d: %d waiting, want 0", on, n)
			}
		})
	}
}
