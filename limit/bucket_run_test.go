package limit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towertest"
)

// Across a window's end, Rate(10 per second) lets 20 requests through
// within 1ms: 10 at the end of one window and 10 at the start of the next.
// Bucket(10 per second, burst 10) lets 10 through then, and the 11th at
// 1.099s, when its token is there.
func TestBucketVersusRateAcrossBoundary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rate := limit.NewRate(echo, 10, time.Second)
		bucket := limit.NewBucket(echo, 10, time.Second, 10)
		start := time.Now()
		p := towertest.MustReady(t, rate) // opens the window [0s, 1s)
		p.Release()
		sleepUntil(start, 999*time.Millisecond)
		rateN, bucketN := countNow(t, rate), countNow(t, bucket)
		sleepUntil(start, time.Second)
		rateN, bucketN = rateN+countNow(t, rate), bucketN+countNow(t, bucket)
		if rateN != 20 || bucketN != 10 {
			t.Errorf("in [999ms, 1s]: Rate let %d through, Bucket %d; want 20 and 10", rateN, bucketN)
		}
		r := towertest.GoRequest(t.Context(), svc(bucket), "x")
		if r.ExpectValue(t, "x"); r.Since(start) != 1099*time.Millisecond {
			t.Errorf("the Bucket's 11th served at %v, want 1.099s", r.Since(start))
		}
	})
}

// A run of arrivals in random bursts: every caller is served at the
// instant a first-come-first-served GCRA serves it (its arrival, its
// predecessor's turn, or its token, whichever is last), and the run
// never has more than burst + d/interval requests within any stretch d.
func TestBucketRunMatchesModel(t *testing.T) {
	const (
		burst    = 4
		interval = 100 * time.Millisecond
	)
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("Seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 12))
				b := limit.NewBucket(echo, 10, time.Second, burst)
				start := time.Now()
				var arrived []time.Duration
				var answers []*time.Duration // each caller's, set when it is answered
				var wg sync.WaitGroup
				for range 40 {
					time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
					for range rng.IntN(7) {
						arrived = append(arrived, time.Since(start))
						answered := new(time.Duration)
						answers = append(answers, answered)
						wg.Go(func() {
							callNow(t, b, "x")
							*answered = time.Since(start)
						})
						synctest.Wait() // served, or queued, in order
					}
				}
				wg.Wait()
				served := make([]time.Duration, len(answers))
				var tat, prev time.Duration // the model
				for i, a := range arrived {
					at := max(a, prev, tat-burst*interval+interval)
					tat, prev = max(tat, at)+interval, at
					if served[i] = *answers[i]; served[i] != at {
						t.Fatalf("caller %d, arrived at %v: served at %v, want %v", i, a, served[i], at)
					}
				}
				checkBurstBound(t, served, burst, interval)
			})
		})
	}
}

// checkBurstBound fails t if more than burst + d/interval of the instants
// at, in order, fall within a stretch of time d.
func checkBurstBound(t *testing.T, at []time.Duration, burst int, interval time.Duration) {
	t.Helper()
	tight := false
	for i := range at {
		for j := i; j < len(at); j++ {
			n, bound := j-i+1, burst+int((at[j]-at[i])/interval)
			if n > bound {
				t.Fatalf("%d requests within [%v, %v], want at most %d", n, at[i], at[j], bound)
			}
			tight = tight || n == bound
		}
	}
	if !tight && len(at) >= burst {
		t.Error("the bound is never reached: the run does not test it")
	}
}

// Many goroutines taking tokens at once, lock-free and in the queue: at 0
// exactly burst tokens go out, then exactly one every interval.
func TestBucketConcurrentTakers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const goroutines, each, burst = 8, 10, 20
		b := limit.NewBucket(echo, 1, time.Millisecond, burst)
		start := time.Now()
		var mu sync.Mutex
		var got int
		var served []time.Duration
		var wg, probed sync.WaitGroup
		probed.Add(goroutines)
		for range goroutines {
			wg.Go(func() {
				n := 0
				for range each {
					if p, ok, err := tower.ReadyNow(svc(b)); err == nil && ok {
						p.Call(t.Context(), "x")
						n++
					}
				}
				mu.Lock()
				got += n
				mu.Unlock()
				probed.Done()
				probed.Wait()
				for range each {
					callNow(t, b, "x")
					mu.Lock()
					served = append(served, time.Since(start))
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if got != burst {
			t.Errorf("probes at 0 got %d tokens, want %d", got, burst)
		}
		for i, at := range served {
			if want := time.Duration(i+1) * time.Millisecond; at != want {
				t.Fatalf("waiting request %d served at %v, want %v", i, at, want)
			}
		}
	})
}

// The timer set for a waiter who left, when the bucket was then given a
// token back and emptied again, is set for the next waiter's token: it is
// served at that token's instant.
func TestBucketTimerFollowsTheHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := limit.NewBucket(echo, 10, time.Second, 1)
		start := time.Now()
		p := towertest.MustReady(t, b) // the next token at 100ms
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		if _, err := b.Ready(ctx); err != context.DeadlineExceeded { // sets the timer for 100ms
			t.Fatalf("Ready: got %v, want %v", err, context.DeadlineExceeded)
		}
		p.Release()        // at 10ms: the bucket is full
		callNow(t, b, "x") // the next token at 110ms
		r := towertest.GoRequest(t.Context(), svc(b), "y")
		if r.ExpectValue(t, "y"); r.Since(start) != 110*time.Millisecond {
			t.Errorf("the waiter was served at %v, want 110ms", r.Since(start))
		}
	})
}
