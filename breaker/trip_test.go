package breaker_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/breaker"
)

// A breaker with WithConsecutiveFailures(n) stays closed through n-1
// failures in a row and opens at the nth, not before.
func TestTripsAtNthConsecutiveFailure(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(breaker.WithConsecutiveFailures(n))
			for i := range n - 1 {
				if err := send(t, b, bad); err != errBoom {
					t.Fatalf("call %d: got %v, want %v", i+1, err, errBoom)
				}
				expectState(t, b, breaker.Closed)
			}
			send(t, b, bad)
			expectState(t, b, breaker.Open)
			expectNotReady(t, b)
		})
	}
}

// With no trip condition given, the breaker trips at 5 failures in a row.
func TestDefaultTripsAtFive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker()
		sendN(t, b, bad, 4)
		expectState(t, b, breaker.Closed)
		send(t, b, bad)
		expectState(t, b, breaker.Open)
	})
}

// A success between failures starts the count again: n-1 failures, a
// success, n-1 failures leave the breaker closed.
func TestSuccessResetsCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithConsecutiveFailures(3))
		sendN(t, b, bad, 2)
		if err := send(t, b, ok); err != nil {
			t.Fatalf("got %v, want success", err)
		}
		sendN(t, b, bad, 2)
		expectState(t, b, breaker.Closed)
		send(t, b, bad)
		expectState(t, b, breaker.Open)
	})
}

// WithFailureRatio over LastCalls trips at the failure that brings the
// ratio to the threshold once the window holds minCalls calls: one call
// short, even all failures do not trip.
func TestRatioTripNeedsMinCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithFailureRatio(0.5, 4, breaker.LastCalls(10)))
		sendN(t, b, bad, 3) // 3 of 3 failed, one call short of 4
		expectState(t, b, breaker.Closed)
		send(t, b, bad)
		expectState(t, b, breaker.Open)
	})
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithFailureRatio(0.5, 4, breaker.LastCalls(10)))
		sendN(t, b, ok, 2)
		send(t, b, bad) // 1 of 3: too few calls
		expectState(t, b, breaker.Closed)
		send(t, b, bad) // 2 of 4 = 0.5
		expectState(t, b, breaker.Open)
	})
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithFailureRatio(0.5, 4, breaker.LastCalls(10)))
		sendN(t, b, ok, 3)
		send(t, b, bad) // 1 of 4 = 0.25
		send(t, b, bad) // 2 of 5 = 0.4
		expectState(t, b, breaker.Closed)
		send(t, b, bad) // 3 of 6 = 0.5
		expectState(t, b, breaker.Open)
	})
}

// A LastCalls(n) window forgets the call n calls back: a failure that
// leaves it no longer counts.
func TestCountWindowSlides(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithFailureRatio(0.5, 4, breaker.LastCalls(4)))
		send(t, b, bad)
		sendN(t, b, ok, 4) // the failure has left: ok ok ok ok
		send(t, b, bad)    // ok ok ok bad: 0.25
		expectState(t, b, breaker.Closed)
		send(t, b, bad) // ok ok bad bad: 0.5
		expectState(t, b, breaker.Open)
	})
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithFailureRatio(0.75, 4, breaker.LastCalls(4)))
		sendN(t, b, bad, 2)
		send(t, b, ok)
		send(t, b, bad) // bad bad ok bad: 0.75
		expectState(t, b, breaker.Open)
	})
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithFailureRatio(0.75, 4, breaker.LastCalls(4)))
		send(t, b, bad)
		sendN(t, b, ok, 2)
		send(t, b, bad) // bad ok ok bad: 0.5
		send(t, b, bad) // ok ok bad bad: the first failure left, 0.5
		expectState(t, b, breaker.Closed)
		send(t, b, bad) // ok bad bad bad: 0.75
		expectState(t, b, breaker.Open)
	})
}

// A ratio of 0 trips at the first failure once the window has minCalls
// calls, and never on successes; a ratio of 1 only when every call
// failed.
func TestRatioBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithFailureRatio(0, 2, breaker.LastCalls(5)))
		sendN(t, b, ok, 5)
		expectState(t, b, breaker.Closed)
		send(t, b, bad)
		expectState(t, b, breaker.Open)
	})
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithFailureRatio(1, 3, breaker.LastCalls(3)))
		send(t, b, ok)
		sendN(t, b, bad, 2)
		expectState(t, b, breaker.Closed)
		send(t, b, bad)
		expectState(t, b, breaker.Open)
	})
}

// WithFailureRatio alone is the only trip condition: more failures in a
// row than the default 5 do not trip before minCalls. With
// WithConsecutiveFailures too, whichever comes first trips.
func TestTripConditions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithFailureRatio(1, 8, breaker.LastCalls(8)))
		sendN(t, b, bad, 7)
		expectState(t, b, breaker.Closed)
		send(t, b, bad)
		expectState(t, b, breaker.Open)
	})
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithConsecutiveFailures(3), breaker.WithFailureRatio(1, 8, breaker.LastCalls(8)))
		sendN(t, b, bad, 3)
		expectState(t, b, breaker.Open)
	})
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithConsecutiveFailures(3), breaker.WithFailureRatio(0.5, 4, breaker.LastCalls(8)))
		send(t, b, ok)
		send(t, b, bad)
		send(t, b, ok)
		send(t, b, bad) // 2 of 4, never two in a row
		expectState(t, b, breaker.Open)
	})
}

// A LastDuration(10s) window has buckets of 1s: a call counts until the
// start of the 10th bucket after its own, and not a nanosecond longer.
func TestTimeWindowExpiry(t *testing.T) {
	// At 9.999s the failure at 0 still counts: 2 of 2 failed.
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithFailureRatio(1, 2, breaker.LastDuration(10*time.Second)))
		send(t, b, bad)
		time.Sleep(9999 * ms)
		send(t, b, bad)
		expectState(t, b, breaker.Open)
	})
	// At 10s it has left: 1 call, too few.
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithFailureRatio(1, 2, breaker.LastDuration(10*time.Second)))
		send(t, b, bad)
		time.Sleep(10 * time.Second)
		send(t, b, bad)
		expectState(t, b, breaker.Closed)
		send(t, b, bad)
		expectState(t, b, breaker.Open)
	})
	// A call at 0.5s is in bucket 0 too: it leaves at 10s, after 9.5s.
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithFailureRatio(0.5, 2, breaker.LastDuration(10*time.Second)))
		sendN(t, b, ok, 3)
		time.Sleep(500 * ms)
		send(t, b, ok)
		time.Sleep(500 * ms)
		send(t, b, bad) // at 1s: 1 of 5
		time.Sleep(8999 * ms)
		send(t, b, bad) // at 9.999s: 2 of 6
		expectState(t, b, breaker.Closed)
		time.Sleep(ms)
		send(t, b, bad) // at 10s: the successes have left, 3 of 3
		expectState(t, b, breaker.Open)
	})
	// After a silence longer than the window, all of it has left.
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithFailureRatio(0.5, 3, breaker.LastDuration(10*time.Second)))
		send(t, b, bad)
		time.Sleep(3 * time.Second)
		send(t, b, bad)
		time.Sleep(22 * time.Second)
		sendN(t, b, ok, 2)
		send(t, b, bad) // 1 of 3
		expectState(t, b, breaker.Closed)
		time.Sleep(time.Second)
		send(t, b, bad) // 2 of 4
		expectState(t, b, breaker.Open)
	})
}

// A tiny window still has buckets of 1ns at least, and works.
func TestTinyTimeWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithFailureRatio(1, 2, breaker.LastDuration(5)))
		send(t, b, bad)
		time.Sleep(10 * time.Nanosecond)
		send(t, b, bad)
		expectState(t, b, breaker.Closed)
		send(t, b, bad)
		expectState(t, b, breaker.Open)
	})
}

// The window starts empty when the breaker closes again: failures before
// the trip do not count after it.
func TestWindowResetsOnClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithFailureRatio(0.5, 4, breaker.LastCalls(10)))
		sendN(t, b, bad, 4)
		expectState(t, b, breaker.Open)
		time.Sleep(time.Second)
		send(t, b, ok) // the probe closes it
		expectState(t, b, breaker.Closed)
		sendN(t, b, bad, 3) // 3 of 4 with the probe's success, were it kept
		expectState(t, b, breaker.Closed)
		send(t, b, bad)
		expectState(t, b, breaker.Open)
	})
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithFailureRatio(0.5, 2, breaker.LastDuration(10*time.Second)))
		sendN(t, b, bad, 2)
		time.Sleep(time.Second)
		send(t, b, ok)
		expectState(t, b, breaker.Closed)
		send(t, b, bad) // 1 call since closing
		expectState(t, b, breaker.Closed)
		send(t, b, bad)
		expectState(t, b, breaker.Open)
	})
}
