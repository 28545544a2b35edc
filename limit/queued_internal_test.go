package limit

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/sema"
	"github.com/towergo/tower/metrics"
)

// The count of queued callers, which lets Ready skip the lock while nobody
// waits, comes back to 0 however a wait ends: the caller's ctx ends, a new
// window grants it a place, a place given back unused goes to it, or the
// sink panics as the wait begins. A count left above 0 would send every
// later caller down the slow path.
func TestRateQueuedComesBackToZero(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		echo := tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })
		r := NewRate[int, int](echo, 1, 100*time.Millisecond)
		queued := func(when string, want int32) {
			t.Helper()
			synctest.Wait()
			if got := int32(r.line.Len()); got != want {
				t.Errorf("%s: queued = %d, want %d", when, got, want)
			}
		}
		first, err := r.Ready(t.Context()) // the window's one place
		if err != nil {
			t.Fatal(err)
		}
		first.Release() // given back in its window: nobody waits

		// A caller whose ctx ends while it waits.
		taken, err := r.Ready(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		if _, err := r.Ready(ctx); err != context.DeadlineExceeded {
			t.Fatalf("Ready past its ctx: %v", err)
		}
		queued("after a waiter's ctx ended", 0)

		// A caller granted a place by the next window.
		got := make(chan tower.Permit[int, int])
		go func() {
			p, _ := r.Ready(t.Context())
			got <- p
		}()
		queued("while one waits", 1)
		second := <-got // at 100ms
		queued("after the next window granted it", 0)
		taken.Release() // the old window's place: expired, nobody gets it

		// A caller handed a place given back unused.
		go func() {
			p, _ := r.Ready(t.Context())
			got <- p
		}()
		queued("while one waits", 1)
		second.Release()
		third := <-got
		queued("after a place given back went to it", 0)
		third.Release()
	})
}

// panicOnWait is a sink that panics when a caller starts waiting.
type panicOnWait struct{}

func (panicOnWait) Add(k metrics.Kind, delta int64) {
	if k == metrics.Waiting && delta > 0 {
		panic("sink")
	}
}
func (panicOnWait) Observe(time.Duration, metrics.Outcome) {}

// A sink that panics as a wait begins takes the caller out of the queue.
func TestRateQueuedAfterSinkPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		echo := tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })
		r := NewRate[int, int](echo, 1, 100*time.Millisecond, WithMetrics(panicOnWait{}))
		if _, err := r.Ready(t.Context()); err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Error("the sink's panic did not reach the caller")
				}
			}()
			r.Ready(t.Context())
		}()
		if got := int32(r.line.Len()); got != 0 {
			t.Errorf("queued = %d after the sink panicked, want 0", got)
		}
	})
}

// The largest limit a Semaphore can count is accepted.
func TestValidateMaxAcceptsMaxUnits(t *testing.T) {
	validateMax("test", sema.MaxUnits)
}

// A new window grants its places to the callers waiting, and no more: a
// place nobody waited for stays free for the next caller, who gets it at
// once.
func TestRateGrantLeavesTheRest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		echo := tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })
		r := NewRate[int, int](echo, 2, 100*time.Millisecond)
		for range 2 { // the first window's places
			if _, err := r.Ready(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		if _, err := r.Ready(t.Context()); err != nil { // waits for the next window
			t.Fatal(err)
		}
		if got := time.Since(start); got != 100*time.Millisecond {
			t.Fatalf("the waiter got its place after %v, want 100ms", got)
		}
		start = time.Now()
		if _, err := r.Ready(t.Context()); err != nil { // the second place of that window
			t.Fatal(err)
		}
		if got := time.Since(start); got != 0 {
			t.Errorf("the next caller waited %v for the window's second place, want 0", got)
		}
		if got := int32(r.line.Len()); got != 0 {
			t.Errorf("queued = %d, want 0", got)
		}
	})
}

// A Ready takes a place with no clock read until the window comes within
// its margin of the end: a timer says when. From then on it reads the
// clock, so the window still ends at its exact instant; with nobody
// waiting, nothing is scheduled after that. A window too short to have a
// margin is near its end from the start.
func TestRateNearEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		echo := tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })
		r := NewRate[int, int](echo, 3, time.Second)
		start := time.Now()
		take := func(wantWindow uint64) {
			t.Helper()
			n, err := r.reserve(t.Context())
			if err != nil || n != wantWindow {
				t.Fatalf("at %v: got window %d, %v; want window %d", time.Since(start), n, err, wantWindow)
			}
		}
		near := func(want bool) {
			t.Helper()
			synctest.Wait()
			if got := r.places.Load()&nearEnd != 0; got != want {
				t.Errorf("at %v: near the end %t, want %t", time.Since(start), got, want)
			}
		}
		take(1)
		near(false)
		time.Sleep(996*time.Millisecond - time.Nanosecond)
		near(false)
		take(1)
		time.Sleep(time.Nanosecond)
		near(true) // 4ms before the end
		r.line.Lock()
		if r.alarm != 0 {
			t.Errorf("a timer is set for %v with nobody waiting", r.alarm)
		}
		r.line.Unlock()
		time.Sleep(4*time.Millisecond - time.Nanosecond)
		take(1) // the window's last place, 1ns before its end
		time.Sleep(time.Nanosecond)
		take(2) // the next window, at the first window's end
		near(false)

		short := NewRate[int, int](echo, 3, 7*time.Nanosecond)
		if _, err := short.reserve(t.Context()); err != nil {
			t.Fatal(err)
		}
		if short.places.Load()&nearEnd == 0 {
			t.Error("a 7ns window is not near its end from the start")
		}
	})
}

// A timer that fires after the window's end, as on a busy machine, still
// sends Readies to the clock, which opens the next window, and sets
// nothing more with nobody waiting: the window lasts until it fires, and
// no longer.
func TestRateLateTick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		echo := tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })
		r := NewRate[int, int](echo, 3, time.Second)
		if n, err := r.reserve(t.Context()); n != 1 || err != nil {
			t.Fatalf("got window %d, %v; want 1", n, err)
		}
		r.line.Lock()
		r.timer.Stop() // it fires late, below
		r.alarm = 0
		r.line.Unlock()
		time.Sleep(1500 * time.Millisecond)
		r.tick()
		r.line.Lock()
		alarm := r.alarm
		r.line.Unlock()
		if alarm != 0 {
			t.Fatalf("a late tick with nobody waiting set the timer for %v", alarm)
		}
		if n, err := r.reserve(t.Context()); n != 2 || err != nil {
			t.Errorf("at 1.5s: got window %d, %v; want 2", n, err)
		}
	})
}
