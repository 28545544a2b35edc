// Fleet runs four replicas of one service in one program, each with a
// client of its own to one Redis, under two kinds of limit, and prints what
// each replica admitted and the fleet's total:
//
//	4 replicas, 3s a run; redis-server on 127.0.0.1:34521
//	rate 100/s, burst 10, with 1, 2, 3 and 4 callers in the replicas:
//	  local       replica1=310 replica2=309 replica3=309 replica4=309 fleet=1237 (412.3/s)
//	  towerredis  replica1=31 replica2=62 replica3=93 replica4=123 fleet=309 (103.0/s)
//	in flight at once, at most 4, with 8 callers in each replica:
//	  local       peak=16
//	  towerredis  peak=4
//
// With a limit in each replica, 100 requests a second each is 400 for the
// fleet, and 4 in flight each is 16. The same limits kept in Redis by
// package towerredis hold for the fleet: 100 a second, plus the burst of
// 10 the bucket starts with, shared in proportion to each replica's
// demand, and 4 in flight across the fleet. The figures are those of one run; a
// run's totals move by a request or two, and the shares by more, with the
// machine's scheduling.
//
// It starts a redis-server of its own on a free loopback port, and stops
// it at the end; if redis-server is not installed it says how to install
// it, in one line, and exits 1.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towerredis"
	"github.com/towergo/tower/towerredis/redistest"
)

// The experiment's parameters.
const (
	replicas = 4
	rate     = 100 // requests per second
	burst    = 10
	inFlight = 4                     // requests in flight at once
	work     = 20 * time.Millisecond // each request's time in the concurrency runs
)

func main() {
	if !redistest.Installed() {
		fmt.Fprintln(os.Stderr, redistest.InstallHint)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "fleet")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	srv, err := redistest.StartServer(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer srv.Stop()
	run(os.Stdout, srv.Addr(), 3*time.Second)
}

// result is what one run of the fleet admitted.
type result struct {
	admitted [replicas]int64
	peak     int64 // requests in the fleet's backends at once, at most
}

func (r result) total() (n int64) {
	for _, a := range r.admitted {
		n += a
	}
	return n
}

// run runs the four experiments for d each against the Redis at addr and
// prints them to w.
func run(w io.Writer, addr string, d time.Duration) {
	fmt.Fprintf(w, "%d replicas, %v a run; redis-server on %s\n", replicas, d, addr)
	fmt.Fprintf(w, "rate %d/s, burst %d, with 1, 2, 3 and 4 callers in the replicas:\n", rate, burst)
	local := fleet(d, 0, rising, func(int, *redis.Client) tower.Layer[int, int] {
		return limit.NewBucketLayer[int, int](rate, time.Second, burst)
	}, addr)
	printRate(w, "local", local, d)
	name := fmt.Sprintf("fleet-%d", time.Now().UnixNano())
	shared := fleet(d, 0, rising, func(_ int, rdb *redis.Client) tower.Layer[int, int] {
		return towerredis.NewBucketLayer[int, int](rdb, name, rate, time.Second, burst, towerredis.WithTimeout(time.Second))
	}, addr)
	printRate(w, "towerredis", shared, d)

	fmt.Fprintf(w, "in flight at once, at most %d, with %d callers in each replica:\n", inFlight, many(0))
	local = fleet(d, work, many, func(int, *redis.Client) tower.Layer[int, int] {
		return limit.NewConcurrencyLayer[int, int](inFlight)
	}, addr)
	fmt.Fprintf(w, "  %-11s peak=%d\n", "local", local.peak)
	shared = fleet(d, work, many, func(_ int, rdb *redis.Client) tower.Layer[int, int] {
		return towerredis.NewConcurrencyLayer[int, int](rdb, name, inFlight, 10*time.Second, towerredis.WithTimeout(time.Second))
	}, addr)
	fmt.Fprintf(w, "  %-11s peak=%d\n", "towerredis", shared.peak)
}

func printRate(w io.Writer, label string, r result, d time.Duration) {
	var b strings.Builder
	for i, a := range r.admitted {
		fmt.Fprintf(&b, " replica%d=%d", i+1, a)
	}
	fmt.Fprintf(w, "  %-11s%s fleet=%d (%.1f/s)\n", label, b.String(), r.total(), float64(r.total())/d.Seconds())
}

// rising gives replica i i+1 callers: demands of 1 to 4, to show how a
// shared limit divides.
func rising(i int) int { return i + 1 }

// many gives every replica 8 callers, more than a local limit of 4 lets
// in at once.
func many(int) int { return 8 }

// fleet runs the replicas for d, each behind the layer that limit builds
// for it with a Redis client of its own: replica i has callers(i) callers,
// each sending requests one after the other as fast as the limit lets it.
// A request takes work in the backend, which counts the requests in it at
// once, across the fleet.
func fleet(d, work time.Duration, callers func(replica int) int, limit func(replica int, rdb *redis.Client) tower.Layer[int, int], addr string) result {
	var r result
	var now atomic.Int64
	backend := tower.ServiceFunc[int, int](func(ctx context.Context, n int) (int, error) {
		in := now.Add(1)
		for peak := atomic.LoadInt64(&r.peak); in > peak && !atomic.CompareAndSwapInt64(&r.peak, peak, in); peak = atomic.LoadInt64(&r.peak) {
		}
		time.Sleep(work)
		now.Add(-1)
		return n, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for i := range replicas {
		rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
		defer rdb.Close()
		svc := limit(i, rdb).Wrap(backend)
		for range callers(i) {
			wg.Go(func() {
				for {
					p, err := svc.Ready(ctx)
					if err != nil {
						return // the run is over
					}
					if ctx.Err() != nil {
						p.Release() // granted as the run ended: not counted
						return
					}
					atomic.AddInt64(&r.admitted[i], 1)
					p.Call(ctx, i)
				}
			})
		}
	}
	wg.Wait()
	return r
}
