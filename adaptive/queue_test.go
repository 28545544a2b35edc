package adaptive_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// queued starts a limiter of limit 1 whose dependency's typical latency is
// 10ms (a window ends with every call), takes its permit, and sends a
// request with a deadline of a second every 2ms from 0 to 30ms, when the
// permit is given back; each request takes 10ms in the service. It
// returns the requests, in the order sent, and, if noDeadline, one
// without a deadline sent first, at 0.
func queued(t *testing.T, noDeadline bool, opts ...adaptive.Option) (sent []*towertest.Outcome[int], first *towertest.Outcome[int], counts *metrics.Counts) {
	counts = &metrics.Counts{}
	opts = append([]adaptive.Option{adaptive.WithInitial(1), adaptive.WithBounds(1, 1), adaptive.WithWindow(time.Nanosecond, 1),
		adaptive.WithMetrics(counts)}, opts...)
	l := adaptive.New[int, int](sleeper(10*time.Millisecond), hold, opts...)
	svc := tower.Service[int, int](l)
	tower.Call(t.Context(), svc, 0) // typical: 10ms
	held, _ := l.Ready(t.Context())
	start := time.Now()
	if noDeadline {
		first = towertest.GoRequest(t.Context(), svc, -1)
	}
	for i := 0; i <= 30; i += 2 {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Millisecond)))
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		t.Cleanup(cancel)
		sent = append(sent, towertest.GoRequest(ctx, svc, i))
		synctest.Wait()
	}
	held.Release()
	return sent, first, counts
}

// A waiter with a deadline waits at most twice the dependency's typical
// latency, 20ms here; once the queue has not emptied for that long, a
// standing queue, at most the typical latency, and the newest waiter goes
// first. So the requests sent every 2ms while the permit is held are
// refused 20ms after the first came (those sent up to 10ms) and 10ms
// after each came (the rest), exactly, by the limiter's timer; when the
// permit comes back at 30ms, the request sent then takes it, and is
// answered at 40ms. A refused request fails with loadshed.ErrOverloaded,
// and counts as Shed.
func TestWaitBoundAndNewestFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent, _, counts := queued(t, false)
		for _, o := range sent {
			o.Wait()
		}
		for k, o := range sent {
			i := time.Duration(2*k) * time.Millisecond
			switch {
			case i == 30*time.Millisecond:
				o.ExpectValue(t, 30)
				if e := o.Elapsed(); e != 10*time.Millisecond {
					t.Errorf("the request sent at 30ms answered after %v, want 10ms", e)
				}
			case i <= 10*time.Millisecond:
				o.ExpectError(t, loadshed.ErrOverloaded)
				if e := o.Elapsed(); e != 20*time.Millisecond+1-i {
					t.Errorf("the request sent at %v refused after %v, want %v", i, e, 20*time.Millisecond+1-i)
				}
			default:
				o.ExpectError(t, loadshed.ErrOverloaded)
				if e := o.Elapsed(); e != 10*time.Millisecond+1 {
					t.Errorf("the request sent at %v refused after %v, want 10.000001ms", i, e)
				}
			}
		}
		if n := counts.Get(metrics.Shed); n != 15 {
			t.Errorf("Shed %d, want 15", n)
		}
	})
}

// A waiter without a deadline is never refused, and under a standing
// queue it goes when it is the oldest of its priority: the one sent at 0
// takes the permit given back at 30ms, and the others are refused as
// before, but for the one sent at 30ms, which has waited no more than the
// bound when the permit comes back at 40ms, and is answered at 50ms.
func TestWaiterWithoutDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent, first, _ := queued(t, true)
		first.ExpectValue(t, -1)
		if e := first.Elapsed(); e != 40*time.Millisecond {
			t.Errorf("the request without a deadline answered after %v, want 40ms", e)
		}
		last := sent[len(sent)-1]
		for _, o := range sent[:len(sent)-1] {
			o.ExpectError(t, loadshed.ErrOverloaded)
		}
		last.ExpectValue(t, 30)
		if e := last.Elapsed(); e != 20*time.Millisecond {
			t.Errorf("the request sent at 30ms answered after %v, want 20ms", e)
		}
	})
}

// WithWaitToDeadline: waiters wait until their deadline, oldest first, as
// a semaphore's do: the requests are served in the order sent, 10ms
// apart from 30ms.
func TestWaitToDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent, _, counts := queued(t, false, adaptive.WithWaitToDeadline())
		for k, o := range sent {
			o.ExpectValue(t, 2*k)
			if e, want := o.Elapsed(), time.Duration(40+10*k-2*k)*time.Millisecond; e != want {
				t.Errorf("the request sent at %dms answered after %v, want %v", 2*k, e, want)
			}
		}
		if n := counts.Get(metrics.Shed); n != 0 {
			t.Errorf("Shed %d, want 0", n)
		}
	})
}
