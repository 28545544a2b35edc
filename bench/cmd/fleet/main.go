// Fleet measures towerredis's fleet-wide rate limit on a real redis-server
// it starts on loopback: its cost per request next to
// github.com/go-redis/redis_rate (v10) on the same server in the same run,
// and how close a fleet of replicas sharing one limit comes to it, with
// and without batching, in round trips per request.
//
//	go run ./cmd/fleet                     # about a minute; exits 1 if a target is missed
//	go run ./cmd/fleet -rounds 7 -duration 10s -replicas 8 -rate 1000
//
// Targets: our cost per request at most redis_rate's (ratio <= 1.0), both
// at one round trip per request; a fleet's admitted total within 2% of the
// limit; with batching, at least 5 times fewer round trips per request at
// that same accuracy.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/towerredis"
	"github.com/towergo/tower/towerredis/redistest"
)

// config is what a run measures.
type config struct {
	rounds   int           // alternating benchmark rounds, ours then redis_rate's
	duration time.Duration // of each fleet run
	replicas int           // in each fleet run
	callers  int           // goroutines per replica
	rate     int           // the fleet's limit, per second
	burst    int           // the fleet's burst
	batch    int           // tokens per round trip in the batched run
}

func main() {
	var c config
	flag.IntVar(&c.rounds, "rounds", 5, "benchmark rounds, each ours then redis_rate's; the median counts")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "length of each fleet run")
	flag.IntVar(&c.replicas, "replicas", 8, "replicas sharing the limit, each with a client of its own")
	flag.IntVar(&c.callers, "callers", 4, "goroutines calling through each replica")
	flag.IntVar(&c.rate, "rate", 1000, "the fleet's limit, requests per second")
	flag.IntVar(&c.burst, "burst", 10, "the fleet's burst")
	flag.IntVar(&c.batch, "batch", 8, "tokens per round trip in the batched fleet run")
	flag.Parse()
	if !redistest.Installed() {
		fmt.Fprintln(os.Stderr, redistest.InstallHint)
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "fleet-bench")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer os.RemoveAll(dir)
	srv, err := redistest.StartServer(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer srv.Stop()
	ok := run(os.Stdout, srv.Addr(), c)
	srv.Stop()
	if !ok {
		os.Exit(1)
	}
}

// newClient is a client of the server at addr, as the limits need it: a
// round trip's deadline must reach the socket.
func newClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
}

// run measures everything and prints it to w, and reports whether every
// target was met.
func run(w io.Writer, addr string, c config) bool {
	ours, theirs := perRequest(addr, c.rounds)
	ratio := ours.ns / theirs.ns
	fmt.Fprintf(w, "per_request towerredis=%.1fus redis_rate=%.1fus ratio=%.2f allocs=%d/%d round_trips=%.2f/%.2f\n",
		ours.ns/1e3, theirs.ns/1e3, ratio, ours.allocs, theirs.allocs, ours.trips, theirs.trips)

	plain := fleet(addr, c, 1)
	batched := fleet(addr, c, c.batch)
	for _, f := range []fleetResult{plain, batched} {
		fmt.Fprintf(w, "fleet replicas=%d limit=%d/s burst=%d batch=%d for %v: admitted %d (%.1f/s, %+.2f%%), round trips per request %.3f\n",
			c.replicas, c.rate, c.burst, f.batch, c.duration, f.admitted, f.perSecond, 100*f.err, f.tripsPerRequest)
	}
	fewer := plain.tripsPerRequest / batched.tripsPerRequest

	ok := true
	check := func(met bool, format string, args ...any) {
		verdict := "met"
		if !met {
			verdict, ok = "MISSED", false
		}
		fmt.Fprintf(w, "summary: "+format+": %s\n", append(args, verdict)...)
	}
	check(ratio <= 1.0 && ours.trips <= 1.01 && theirs.trips <= 1.01,
		"towerredis costs %.2fx redis_rate per request at %.2f round trips each (target <= 1.0)", ratio, ours.trips)
	check(abs(plain.err) <= 0.02, "the fleet admitted %+.2f%% of its limit (target within 2%%)", 100*plain.err)
	check(abs(batched.err) <= 0.02 && fewer >= 5,
		"batches of %d: %+.2f%% of the limit at %.1fx fewer round trips (targets within 2%%, at least 5x)", c.batch, 100*batched.err, fewer)
	return ok
}

func abs(x float64) float64 { return max(x, -x) }

// cost is one side's figure per request.
type cost struct {
	ns     float64 // median over the rounds
	allocs int64
	trips  float64 // round trips to Redis per request
}

// perRequest measures one request through each limit, at a rate that
// never limits, so that each costs exactly its round trip and its own
// work: ours through tower.Call on a Bucket, redis_rate's Allow. They take
// turns, so that a machine that slows down for a while slows both alike.
func perRequest(addr string, rounds int) (ours, theirs cost) {
	ctx := context.Background()
	const huge = 1_000_000 // a token every microsecond, a million at once
	oursClient, theirClient := newClient(addr), newClient(addr)
	defer oursClient.Close()
	defer theirClient.Close()

	var trips atomic.Int64
	handler := tower.ServiceFunc[int, int](func(_ context.Context, n int) (int, error) { return n, nil })
	svc := towerredis.NewBucket(handler, oursClient, "bench", huge, time.Second, huge,
		towerredis.WithObserver(func(towerredis.RoundTrip) { trips.Add(1) }),
		towerredis.WithTimeout(time.Second), towerredis.WithFailMode(towerredis.FailClosed))
	limiter := redis_rate.NewLimiter(theirClient)
	limit := redis_rate.Limit{Rate: huge, Burst: huge, Period: time.Second}
	var theirTrips atomic.Int64
	theirClient.AddHook(countHook{&theirTrips})

	// testing.Benchmark runs its function with a growing b.N until it
	// takes long enough; the round trips are those of the last run.
	var oursNs, theirNs []float64
	for range rounds {
		r := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			trips.Store(0)
			for i := range b.N {
				if _, err := tower.Call(ctx, svc, i); err != nil {
					b.Fatal(err)
				}
			}
			ours.trips = float64(trips.Load()) / float64(b.N)
		})
		oursNs = append(oursNs, float64(r.NsPerOp()))
		ours.allocs = r.AllocsPerOp()

		r = testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			theirTrips.Store(0)
			for range b.N {
				res, err := limiter.Allow(ctx, "bench", limit)
				if err != nil || res.Allowed != 1 {
					b.Fatal(err, res)
				}
			}
			theirs.trips = float64(theirTrips.Load()) / float64(b.N)
		})
		theirNs = append(theirNs, float64(r.NsPerOp()))
		theirs.allocs = r.AllocsPerOp()
	}
	ours.ns, theirs.ns = median(oursNs), median(theirNs)
	return ours, theirs
}

// countHook counts the commands a go-redis client sends: redis_rate's
// round trips.
type countHook struct{ n *atomic.Int64 }

func (countHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

func (countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// fleetResult is what one fleet run admitted.
type fleetResult struct {
	batch           int
	admitted        int64
	perSecond       float64
	err             float64 // admitted over the limit's budget, minus 1
	tripsPerRequest float64
}

// fleet runs c.replicas replicas, each with a client of its own and a Rate
// of the one limit, c.callers goroutines each calling through it as fast
// as it lets them, for c.duration, and counts the requests admitted. The
// limit's budget over the run is rate*duration plus the burst, which the
// bucket holds at the start.
func fleet(addr string, c config, batch int) fleetResult {
	name := fmt.Sprintf("fleet-%d-%d", batch, time.Now().UnixNano())
	var admitted, trips atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), c.duration)
	defer cancel()
	var wg sync.WaitGroup
	for range c.replicas {
		client := newClient(addr)
		defer client.Close()
		// A round trip that timed out on a busy machine would admit
		// without a token under FailOpen and count as the limit's error:
		// a generous timeout, and FailClosed, measure the limit alone.
		opts := []towerredis.BucketOption{
			towerredis.WithObserver(func(towerredis.RoundTrip) { trips.Add(1) }),
			towerredis.WithTimeout(time.Second),
			towerredis.WithFailMode(towerredis.FailClosed),
		}
		if batch > 1 {
			opts = append(opts, towerredis.WithBatch(batch))
		}
		handler := tower.ServiceFunc[int, int](func(_ context.Context, n int) (int, error) { return n, nil })
		svc := towerredis.NewBucket(handler, client, name, c.rate, time.Second, c.burst, opts...)
		for range c.callers {
			wg.Go(func() {
				for {
					p, err := svc.Ready(ctx)
					if err != nil {
						return // the run is over
					}
					if ctx.Err() != nil {
						p.Release() // granted after the end: not counted
						return
					}
					admitted.Add(1)
					p.Call(ctx, 0)
				}
			})
		}
	}
	wg.Wait()
	budget := float64(c.rate)*c.duration.Seconds() + float64(c.burst)
	n := admitted.Load()
	return fleetResult{
		batch:           batch,
		admitted:        n,
		perSecond:       float64(n) / c.duration.Seconds(),
		err:             float64(n)/budget - 1,
		tripsPerRequest: float64(trips.Load()) / float64(max(n, 1)),
	}
}
