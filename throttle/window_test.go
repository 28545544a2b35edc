package throttle_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/throttle"
)

// A window of 12s is 120 buckets of 100ms from the Throttle's creation: a
// count leaves it when its bucket is 120 buckets old, at the exact instant
// that bucket's 12s are up, and not a nanosecond before.
func TestWindowExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &backend{}
		svc := throttle.New(b, throttle.NotOverloaded, throttle.WithWindow(12*time.Second),
			throttle.WithMaxRejection(1), throttle.WithRand(&neverRejects{}))
		start := time.Now()
		at := func(d time.Duration) { time.Sleep(d - time.Since(start)) }

		at(50 * time.Millisecond) // bucket 0
		fill(t, svc, b, 10, 0)
		at(150 * time.Millisecond) // bucket 1
		fill(t, svc, b, 5, 5)
		expectProbability(t, svc, 5.0/16) // 15 requests, 5 accepts

		at(12*time.Second - 1)
		expectProbability(t, svc, 5.0/16)
		at(12 * time.Second) // bucket 0 leaves: 5 requests, 5 accepts
		expectProbability(t, svc, 0)
		fill(t, svc, b, 9, 0) // 14 requests, 5 accepts
		expectProbability(t, svc, 4.0/15)

		at(12100*time.Millisecond - 1)
		expectProbability(t, svc, 4.0/15)
		at(12100 * time.Millisecond) // bucket 1 leaves: 9 requests
		expectProbability(t, svc, 9.0/10)

		at(24*time.Second - 1)
		expectProbability(t, svc, 9.0/10)
		at(24 * time.Second) // bucket 120 leaves
		expectProbability(t, svc, 0)
	})
}

// After an idle gap of several windows, nothing of before is left, and
// the window counts again from the first request after it.
func TestWindowAfterIdleGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &backend{}
		svc := throttle.New(b, throttle.NotOverloaded, throttle.WithWindow(12*time.Second),
			throttle.WithMaxRejection(1), throttle.WithRand(&neverRejects{}))
		for range 3 {
			fill(t, svc, b, 10, 2)
			time.Sleep(5 * time.Second)
		}
		// 15s: the first 10 left at 12s; the next 20 are in.
		expectProbability(t, svc, 12.0/21)
		time.Sleep(time.Hour + 50*time.Millisecond)
		expectProbability(t, svc, 0)
		fill(t, svc, b, 3, 1) // 50ms into their bucket
		expectProbability(t, svc, 1.0/4)
		time.Sleep(12*time.Second - 50*time.Millisecond - 1)
		expectProbability(t, svc, 1.0/4)
		time.Sleep(time.Nanosecond)
		expectProbability(t, svc, 0)
	})
}

// The default window is two minutes of one-second buckets: a count made
// at 0.5s is in the window until 120s, and leaves at 120s.
func TestDefaultWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &backend{}
		svc := throttle.New(b, throttle.NotOverloaded, throttle.WithRand(&neverRejects{}))
		time.Sleep(500 * time.Millisecond)
		fill(t, svc, b, 10, 0)
		time.Sleep(119*time.Second + 500*time.Millisecond - 1)
		expectProbability(t, svc, throttle.DefaultMaxRejection)
		time.Sleep(time.Nanosecond)
		expectProbability(t, svc, 0)
		if throttle.DefaultWindow != 2*time.Minute {
			t.Errorf("DefaultWindow: got %v, want 2m", throttle.DefaultWindow)
		}
	})
}

// A window shorter than 120ns is kept as buckets of 1ns: a count leaves it
// exactly the window's length after the bucket it fell in started.
func TestTinyWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &backend{}
		svc := throttle.New(b, throttle.NotOverloaded, throttle.WithWindow(50*time.Nanosecond),
			throttle.WithMaxRejection(1), throttle.WithRand(&neverRejects{}))
		fill(t, svc, b, 3, 0)
		time.Sleep(49 * time.Nanosecond)
		expectProbability(t, svc, 3.0/4)
		time.Sleep(time.Nanosecond)
		expectProbability(t, svc, 0)
	})
}
