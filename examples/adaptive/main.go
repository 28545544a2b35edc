// Adaptive compares ways to protect a server whose capacity changes: no
// limit, a static concurrency limit, package adaptive's limit with each of
// its algorithms, and failsafe-go's adaptive limiter. It prints a line per
// strategy and phase, then whether each of ours met the targets:
//
//	none      phase=1 capacity=400/s goodput=2% p50=1000ms p99=1009ms settle=never shed=0%
//	none      phase=2 capacity=200/s goodput=0% p50=1000ms p99=1009ms settle=never shed=0%
//	none      phase=3 capacity=600/s goodput=0% p50=1005ms p99=1009ms settle=never shed=0%
//	static    phase=1 capacity=400/s goodput=100% p50=39ms p99=39ms settle=0s shed=50%
//	static    phase=2 capacity=200/s goodput=100% p50=79ms p99=79ms settle=0s shed=75%
//	static    phase=3 capacity=600/s goodput=100% p50=23ms p99=27ms settle=0s shed=25%
//	gradient2 phase=1 capacity=400/s goodput=100% p50=12ms p99=45ms settle=0s shed=50%
//	gradient2 phase=2 capacity=200/s goodput=99% p50=18ms p99=28ms settle=0s shed=75%
//	gradient2 phase=3 capacity=600/s goodput=87% p50=11ms p99=14ms settle=0s shed=35%
//	vegas     phase=1 capacity=400/s goodput=100% p50=19ms p99=45ms settle=0s shed=50%
//	vegas     phase=2 capacity=200/s goodput=100% p50=35ms p99=39ms settle=0s shed=75%
//	vegas     phase=3 capacity=600/s goodput=100% p50=17ms p99=19ms settle=0s shed=25%
//	aimd      phase=1 capacity=400/s goodput=100% p50=47ms p99=55ms settle=0s shed=50%
//	aimd      phase=2 capacity=200/s goodput=100% p50=58ms p99=99ms settle=0s shed=75%
//	aimd      phase=3 capacity=600/s goodput=100% p50=23ms p99=33ms settle=0s shed=25%
//	failsafe  phase=1 capacity=400/s goodput=2% p50=221ms p99=386ms settle=never shed=49%
//	failsafe  phase=2 capacity=200/s goodput=0% p50=427ms p99=517ms settle=never shed=75%
//	failsafe  phase=3 capacity=600/s goodput=0% p50=142ms p99=173ms settle=never shed=25%
//	failsafe0 phase=1 capacity=400/s goodput=100% p50=61ms p99=75ms settle=0s shed=50%
//	failsafe0 phase=2 capacity=200/s goodput=1% p50=110ms p99=138ms settle=never shed=75%
//	failsafe0 phase=3 capacity=600/s goodput=100% p50=39ms p99=52ms settle=0s shed=25%
//	gradient2 targets: missed: phase 3 goodput 87% < 90%; phase 3 goodput 87% < failsafe0's 100%
//	vegas targets: met
//	aimd targets: met
//
// Those are the figures of its test, which runs the same program on
// synctest's virtual clock in about two seconds. In real time every
// strategy runs at once, each against its own server, so the program
// takes the run's length, 31 seconds. On a 2-core VM busy with other
// work, timers fire late, and two runs differed from these: latencies by
// up to 20ms, some settle times by seconds where the machine stalled for
// every strategy at once, and most of all gradient2's third phase, whose
// limit just above six workers leaves them idle whenever a request is
// late (goodput 87% in one run, 66% in the other):
//
//	gradient2 phase=3 capacity=600/s goodput=66% p50=11ms p99=32ms settle=0s shed=51%
//
// From the repository's root,
//
//	go run ./examples/adaptive -plot docs/adaptive.png
//
// also draws the limit, the requests in flight and the p99 of each window
// over time, one line per strategy: that is how docs/adaptive.png was made.
//
// # The experiment
//
// The server is a pool of workers, each serving one request at a time in
// 10ms, its latency when nobody queues. It has four workers for 10s (400
// requests per second), then two for 10s (200/s), then six for 10s
// (600/s); a worker that goes finishes its request first. A request waits
// for a free worker, first come first served, for as long as its client
// waits. The work is a sleep, which needs no CPU, so the figures do not
// depend on the machine.
//
// The load is an open loop of 800 requests per second for the 30s, above
// the capacity in every phase: 24,000 requests, one at a random instant
// (from a seeded source) in each interval of 1.25ms, the same for every
// strategy. A client gives up after a second.
//
// The strategies, each in front of a server of its own:
//
//   - none: the bare server.
//   - static: LoadShed > ConcurrencyLimit(16), sized by Little's law for
//     the first phase: 400/s times a wait of four service times, 40ms.
//   - gradient2, vegas, aimd: LoadShed > adaptive.New with that algorithm,
//     every option at its default: the stack package adaptive's doc gives
//     for a server. Nothing is tuned for this server. AIMD moves on drops
//     alone, and as its doc says, a server gives it the mean latency above
//     which a window counts as one: AIMDTimeout of half the objective, a
//     number about the clients rather than the server.
//   - failsafe: failsafe-go v0.9.8's adaptivelimiter as its documentation
//     configures it (limits 1 to 100 from 20, recent window 1s to 30s and
//     50 samples, baseline window 10, queueing with rejection factors 2 and
//     3), a request waiting in its queue or rejected; see failsafeLimit.
//   - failsafe0: the same limiter without queueing, a request rejected
//     when it is full: the nearest to a LoadShed over a limit.
//
// platinummonkey/go-concurrency-limits is not in the comparison: the Go
// module proxy does not serve it (go list -m -versions answers 403).
//
// # The figures
//
// Each line counts the requests sent during the phase. goodput is the
// answers within the objective, 100ms (ten times the unloaded latency),
// per second, in percent of the phase's capacity. p50 and p99 are over the
// requests that were not shed: the latency of their answer, from the
// instant each was due, or the second after which its client gave up. A
// shed request gets its answer at once, and counts in shed, the percent
// of requests turned away.
//
// settle is how long after the phase's start (the run's start for phase 1,
// the change of capacity for the others) the p99 is within the objective
// and stays there: the p99 of the requests sent in a window of 500ms,
// slid by 10ms, is within the objective for every window from then until
// the last that ends 100ms before the phase does (a request sent later
// may meet the next phase's capacity within its objective). never: the
// last window is above the objective.
//
// The targets, for each of ours: goodput at least 90% of the capacity and
// settle at most 2s in every phase, and goodput and p99 at least as good
// as each peer's (failsafe's and failsafe0's) in every phase. A line per algorithm says
// which it missed.
//
// # What the figures say
//
// Without a limit the queue for the workers grows by the load the server
// cannot take, until every request waits a second, its client gives up,
// and nothing is answered in time. Every limit sheds what is above the
// capacity: 50%, 75% and 25% of the load.
//
// The static limit of 16 suits every phase here: 16 in flight on two
// workers wait 80ms, within the objective, and on six they keep all six
// busy.
//
// Gradient2 and Vegas start with a probe, a few requests at a quarter of
// the limit, which measures the no-load latency: 10ms. Their first loaded
// window, 20 in flight on four workers, takes five times that, and they
// fall by Little's law, to 10 at 1s, then to 6 (Gradient2) and 9 (Vegas):
// 5 and 8 requests in flight, at a p50 of 12ms and 19ms. The first
// phase's p99, 45ms, is that first second's. When the capacity halves,
// the latency jumps, a probe confirms the no-load latency, and the limit
// falls at once: Gradient2's to 3, then between 4 and 5, Vegas's to 8
// (its queue of about 6 beyond the two workers). When it triples, Vegas's
// limit goes from 8 to 14 in one window, and Vegas meets the targets.
//
// Gradient2 misses them in the third phase. Its limit keeps latency
// within its tolerance, 1.5 times the no-load latency: on two workers it
// is 4 or 5. When the capacity triples, it holds for the window after its
// last fall, then grows by its headroom, the square root of the limit,
// one window at a time: 6 at 22.2s, 8 at 23.2s, 9 at 24.2s. It serves
// 282, 280, 444 and 586 requests a second in the phase's first four
// seconds, and 600 from then on: 87% of the phase's capacity, under the
// target of 90% and under failsafe0's 100%, whose limit of 22, too large
// for two workers, covers six at once, at a p99 of 52ms to Gradient2's
// 14ms. It is back at the capacity within 5s of the change, but the
// target is the goodput over the whole phase, and that it misses.
//
// AIMD, with its threshold at 50ms, adds one a second while the mean
// latency is below it and takes a tenth off when it is above: its limit
// saws around the concurrency that makes 50ms, and meets the targets. With
// Netflix's default threshold, 5s, it would see no drop before the
// clients' second, and its 30 or so in flight on two workers would wait
// 150ms.
//
// failsafe-go's limiter queues up to two to three times its limit in
// front of it, and its limit, 20 to 30, is already all a server of two to
// six workers can hold within the objective: its requests wait for the
// limit, then for a worker, 140ms to 520ms in all. Without the queue
// (failsafe0) it does well while the capacity is 400/s and 600/s, though
// its limit climbs to 29 in the first phase; in the second its limit comes
// down only to 22, whose 110ms of waiting on two workers it takes for its
// new baseline, and little is answered in time.
//
// # The test
//
// main_test.go runs the same program on synctest's virtual clock and
// checks the lines above exactly: the server's workers change by the
// virtual instants a request starts and ends at, never by which goroutine
// runs first, and the failsafe-go limiter's queue draws from a seeded
// source, so the run is the same every time.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/towergo/tower"
)

func main() {
	plotPath := flag.String("plot", "", "also draw limit, in flight and p99 over time into this PNG file")
	flag.Parse()
	if err := run(os.Stdout, *plotPath); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// sampleEvery is how often the limit and the requests in flight are read,
// for the picture.
const sampleEvery = 100 * time.Millisecond

// sample is one reading of a strategy's server.
type sample struct {
	at       time.Duration // from the start of the run
	limit    int           // -1 for a strategy without a limit
	inFlight int           // requests in the backend: waiting for a worker or served
}

// result is one strategy's run.
type result struct {
	name    string
	role    role
	out     []outcome
	samples []sample
}

// measure runs every strategy at once, each with its own server and the
// same load, and returns what each got.
func measure() []result {
	ss := strategies()
	results := make([]result, len(ss))
	sched := schedule()
	start := time.Now()
	var wg sync.WaitGroup
	for i, s := range ss {
		b := newBackend(start, phases)
		svc, limit := s.protect(b.service())
		results[i].name, results[i].role = s.name, s.role
		wg.Go(func() { results[i].out = drive(svc, start, sched, tower.PriorityNormal) })
		wg.Go(func() { results[i].samples = watch(b.requests, limit, start, runLength()) })
	}
	wg.Wait()
	return results
}

// watch reads the requests in flight and the limit every sampleEvery over
// a run of length, from its start to its end.
func watch(inFlight, limit func() int, start time.Time, length time.Duration) []sample {
	var samples []sample
	for at := time.Duration(0); at <= length; at += sampleEvery {
		time.Sleep(time.Until(start.Add(at)))
		s := sample{at: at, limit: -1, inFlight: inFlight()}
		if limit != nil {
			s.limit = limit()
		}
		samples = append(samples, s)
	}
	return samples
}

// run measures, prints a line per strategy and phase, then whether each
// of ours met its targets, and draws the picture into plotPath unless it
// is empty.
func run(w io.Writer, plotPath string) error {
	results := measure()
	stats := make(map[string][]phaseStats)
	var peers []string
	for _, r := range results {
		stats[r.name] = summarize(r.out)
		for i, s := range stats[r.name] {
			fmt.Fprintln(w, line(r.name, i, s))
		}
		if r.role == peer {
			peers = append(peers, r.name)
		}
	}
	for _, r := range results {
		if r.role == ourOwn {
			fmt.Fprintln(w, verdict(r.name, misses(stats[r.name], stats, peers)))
		}
	}
	if plotPath == "" {
		return nil
	}
	return drawPlot(plotPath, results)
}
