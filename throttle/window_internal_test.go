package throttle

import (
	"testing"
	"testing/synctest"
	"time"
)

// Moving the window to the bucket it is at, or to one before it (a caller
// who read the clock before another moved it), changes nothing: every
// bucket in the window keeps its counts, the oldest included.
func TestAdvanceNotForward(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w window
		w.init(120 * time.Second) // buckets of 1s
		w.add(true)               // bucket 0
		time.Sleep(119 * time.Second)
		w.add(false) // bucket 119: bucket 0 is the oldest in the window
		for _, b := range []int64{119, 118, 0} {
			w.advance(b)
			if r, a := w.counts(); r != 2 || a != 1 {
				t.Errorf("after advance(%d): %d requests, %d accepts; want 2, 1", b, r, a)
			}
			if c := w.cur; c != 119 {
				t.Errorf("after advance(%d): at bucket %d, want 119", b, c)
			}
		}
		time.Sleep(time.Second)
		if r, a := w.counts(); r != 1 || a != 0 {
			t.Errorf("at 120s: %d requests, %d accepts; want 1, 0", r, a)
		}
	})
}

// The totals are the sum of the slots, and the window is as many buckets
// as asked for, of the width asked for.
func TestWindowLayout(t *testing.T) {
	tests := []struct {
		d     time.Duration
		n     int
		width time.Duration
	}{
		{2 * time.Minute, 120, time.Second},
		{12 * time.Second, 120, 100 * time.Millisecond},
		{120, 120, 1},
		{119, 119, 1},
		{1, 1, 1},
		{241, 120, 2}, // rounded down: the window is 240ns
	}
	for _, tt := range tests {
		var w window
		w.init(tt.d)
		if len(w.slots) != tt.n || w.width != tt.width {
			t.Errorf("window of %v: %d buckets of %v, want %d of %v", tt.d, len(w.slots), w.width, tt.n, tt.width)
		}
	}
}

// A decision made while requests are being counted never sees a request
// without its accept: with every request accepted, no read of the window
// finds more requests than accepts, which would make a rejection
// probability above zero out of nothing (the flake stress.sh found, 4 in
// 1000 runs of the conformance suite's concurrent callers: one rejected).
func TestCountsNeverShowARequestWithoutItsAccept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w window
		w.init(2 * time.Minute)
		const writers, each = 2, 20000
		done := make(chan struct{})
		torn := make(chan [2]int64, 1)
		go func() {
			for {
				select {
				case <-done:
					close(torn)
					return
				default:
				}
				if r, a := w.counts(); r > a {
					torn <- [2]int64{r, a}
					<-done
					close(torn)
					return
				}
			}
		}()
		finished := make(chan struct{})
		for range writers {
			go func() {
				for range each {
					w.add(true)
				}
				finished <- struct{}{}
			}()
		}
		for range writers {
			<-finished
		}
		close(done)
		if ra, ok := <-torn; ok {
			t.Errorf("a read of the window found %d requests and %d accepts, with every request accepted", ra[0], ra[1])
		}
		if r, a := w.counts(); r != writers*each || a != writers*each {
			t.Errorf("at the end: %d requests, %d accepts; want %d of each", r, a, writers*each)
		}
	})
}
