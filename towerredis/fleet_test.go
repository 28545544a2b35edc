package towerredis_test

import (
	"context"
	"fmt"
	"github.com/towergo/tower/towerredis"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower/towerredis/redistest"
)

// fleet is what a run of replicas sharing one limit measured.
type fleet struct {
	admitted, trips int64
	errs            int64 // round trips that failed
	window          time.Duration
	want            float64       // the burst plus the rate times the window
	stall           time.Duration // the longest time the fleet admitted nothing
}

func (f fleet) String() string {
	return fmt.Sprintf("admitted %d of %.0f allowed in %v (%+.2f%%), %d round trips (%d failed), %.3f per request, longest gap %v",
		f.admitted, f.want, f.window.Round(time.Millisecond), 100*f.deviation(), f.trips, f.errs, float64(f.trips)/float64(f.admitted), f.stall.Round(time.Millisecond))
}

func (f fleet) deviation() float64 { return float64(f.admitted)/f.want - 1 }

// runFleet runs replicas, each a Bucket with a client of its own and
// callers goroutines taking tokens as fast as they get them, for d, on
// one limit of num per second with room for burst.
func runFleet(t *testing.T, addr, name string, replicas, callers, num, burst int, d time.Duration, opts ...towerredis.BucketOption) fleet {
	var (
		trips, errs atomic.Int64
		wg          sync.WaitGroup
	)
	// A round trip that fails admits nothing (FailClosed), and a busy
	// machine gets a second for each: what is measured is the limit, not
	// its fail mode.
	opts = append(opts, towerredis.WithObserver(func(rt towerredis.RoundTrip) {
		trips.Add(1)
		if rt.Err != nil {
			errs.Add(1)
		}
	}), towerredis.WithFailMode(towerredis.FailClosed), towerredis.WithTimeout(time.Second))
	src, err := os.ReadFile("rate.lua") // the script, as the package embeds it
	if err != nil {
		t.Fatal(err)
	}
	rates := make([]*towerredis.Bucket[string, string], replicas)
	clients := make([]*redis.Client, replicas)
	for i := range rates {
		c := newClient(t, addr)
		clients[i] = c
		// Connections dialled and the script loaded beforehand: the
		// bucket keeps no more than burst tokens while nobody asks.
		for range callers {
			wg.Go(func() { c.Ping(t.Context()) })
		}
		c.ScriptLoad(t.Context(), string(src))
		rates[i] = towerredis.NewBucket[string, string](okService, c, name, num, time.Second, burst, opts...)
	}
	wg.Wait()
	// The window starts on Redis's clock, just before the callers do: the
	// same machine's clock as ours, read where the bucket reads it.
	start, err := clients[0].Time(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithDeadline(t.Context(), start.Add(d))
	defer cancel()
	times := make([][]time.Time, replicas*callers)
	for i := range times {
		r := rates[i/callers]
		wg.Go(func() {
			// Until the deadline: after it, Ready would still grant the
			// tokens there now, to a done ctx.
			for ctx.Err() == nil {
				p, err := r.Ready(ctx)
				if err != nil {
					return
				}
				p.Call(ctx, "x")
				times[i] = append(times[i], time.Now())
			}
		})
	}
	wg.Wait()
	all := slices.Concat(times...)
	slices.SortFunc(all, time.Time.Compare)
	stall := time.Duration(0)
	for i, prev := 0, start; i < len(all); prev, i = all[i], i+1 {
		stall = max(stall, all[i].Sub(prev))
	}
	// Ready still grants the tokens there now to a caller whose deadline
	// passed while it was on its way to Redis: a stall can carry grants
	// past the deadline, so the window ends at the last one, if later.
	window := d
	if n := len(all); n > 0 {
		window = max(d, all[n-1].Sub(start))
	}
	return fleet{admitted: int64(len(all)), trips: trips.Load(), errs: errs.Load(), window: window,
		want: float64(burst) + float64(num)*window.Seconds(), stall: stall}
}

// Eight replicas, each with a client of its own and 8 callers, share a
// limit of 1,000/s with a burst of 100 for two seconds: the fleet admits
// within 2% of what the limit allows (the burst and a token a
// millisecond), with one round trip per request and, with WithBatch(10),
// within 2% too with at least 5 times fewer round trips.
//
// The fleet can only fall short of the limit if its callers stop asking:
// each caller holds at most one reserved token and the bucket up to burst,
// so together they ride out a stall of the test's process of up to
// (replicas*callers + burst) ms. A busy machine with the race detector on
// can stall it longer; then the shortfall is the machine's, and only the
// upper bound is checked, with the stall logged.
func TestBucketFleetAccuracy(t *testing.T) {
	srv := redistest.Start(t)
	const (
		replicas, callers = 8, 8
		num, burst        = 1000, 100
		d                 = 2 * time.Second
		rideOut           = (replicas*callers + burst) * time.Millisecond
	)
	one := runFleet(t, srv.Addr(), "fleet1", replicas, callers, num, burst, d)
	t.Logf("one token per round trip: %v", one)
	batched := runFleet(t, srv.Addr(), "fleet10", replicas, callers, num, burst, d, towerredis.WithBatch(10))
	t.Logf("WithBatch(10):            %v", batched)
	for _, f := range []fleet{one, batched} {
		if dev := f.deviation(); dev > 0.02 {
			t.Errorf("%v: want within 2%% of the limit", f)
		} else if dev < -0.02 {
			if f.stall < rideOut {
				t.Errorf("%v: want within 2%% of the limit", f)
			} else {
				t.Logf("the test's process stalled %v, longer than the %v its callers ride out: the shortfall is not measured", f.stall, rideOut)
			}
		}
	}
	// One round trip per request; and near the deadline, the callers whose
	// next token would come after it are refused and ask again, a few
	// times each: 64 callers, in 2,100 requests.
	if float64(one.trips) > 1.1*float64(one.admitted) {
		t.Errorf("%d round trips for %d requests, want one per request (and a few callers asking again near the end)", one.trips, one.admitted)
	}
	if rt1, rt10 := float64(one.trips)/float64(one.admitted), float64(batched.trips)/float64(batched.admitted); rt10*5 > rt1 {
		t.Errorf("WithBatch(10) makes %.3f round trips per request, without %.3f: want at least 5 times fewer", rt10, rt1)
	}
}
