package towerredis

// In-package: it checks the unexported roundTrip, ints and sleep.

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// The observer is told each round trip's op, its latency from the call to
// the reply, exactly, and its error: a bad reply is an ErrBadReply.
func TestRoundTripObserved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen []RoundTrip
		o := bucketOptions("test", []BucketOption{WithObserver(func(rt RoundTrip) { seen = append(seen, rt) })})
		run := func(context.Context) (any, error) {
			time.Sleep(7 * time.Millisecond)
			return "not a list", nil
		}
		if _, err := roundTrip(t.Context(), &o, "take", run, ints[[2]int64], nil); !errors.Is(err, ErrBadReply) {
			t.Fatalf("round trip: %v, want ErrBadReply", err)
		}
		if len(seen) != 1 || seen[0].Op != "take" || seen[0].Latency != 7*time.Millisecond || !errors.Is(seen[0].Err, ErrBadReply) {
			t.Errorf("observed %+v, want one take of 7ms with ErrBadReply", seen)
		}
	})
}

// A wait of nothing, or less, is over at once, even for a ctx that has
// ended: a token due now is the caller's.
func TestSleepNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 100 { // a timer of 0 and a done ctx would race
		if !sleep(ctx, 0) || !sleep(ctx, -time.Second) {
			t.Fatal("a wait of 0 or less reported as cut short")
		}
	}
	if sleep(ctx, time.Hour) {
		t.Error("a wait of an hour with a done ctx reported as waited")
	}
}
