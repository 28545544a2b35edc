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
	plotPath := flag.String("plot", "", "also draw the comparison's limit, in flight and p99 over time into this PNG file")
	scenariosPath := flag.String("plot-scenarios", "", "also draw the scenarios' limits over time into this PNG file")
	flag.Parse()
	if err := run(os.Stdout, *plotPath, *scenariosPath); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// sampleEvery is how often the limit and the requests in flight are read:
// for the pictures, and for the scenarios' limits and settling times.
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

// run measures the comparison and the scenarios at once; prints a line
// per strategy and phase, then whether each of ours met its targets, then
// each scenario's table; and draws the pictures into plotPath and
// scenariosPath, each unless it is empty.
func run(w io.Writer, plotPath, scenariosPath string) error {
	var results []result
	scs := scenarios()
	scResults := make([][]result, len(scs))
	var wg sync.WaitGroup
	wg.Go(func() { results = measure() })
	for i, sc := range scs {
		wg.Go(func() { scResults[i] = sc.measure() })
	}
	wg.Wait()
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
	for i, sc := range scs {
		fmt.Fprint(w, sc.report(scResults[i]))
	}
	if plotPath != "" {
		if err := drawPlot(plotPath, results); err != nil {
			return err
		}
	}
	if scenariosPath != "" {
		return drawScenarios(scenariosPath, scs, scResults)
	}
	return nil
}
