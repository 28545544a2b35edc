// Failure compares clients of five backends, three of which fail in
// different ways: the power-of-two-choices balancer alone; with the retry
// tower offers; this repository's full stack; and failsafe-go's retry,
// circuit breaker and hedge over the same balancer. It prints a line per
// client, then whether ours met its targets:
//
//	healthy   success=100.00% p50=8ms p99=28ms
//	p2c       success=62.92% p50=7ms p99=27ms p99-after=26ms amplification=1.000 stop(b3)=200ms stop(b4)=never back(b4)=0s
//	p2c+retry success=78.18% p50=8ms p99=32ms p99-after=30ms amplification=1.253 stop(b3)=200ms stop(b4)=never back(b4)=0s
//	ours      success=99.98% p50=9ms p99=30ms p99-after=29ms amplification=1.028 stop(b3)=200ms stop(b4)=100ms back(b4)=1.7s
//	failsafe  success=96.15% p50=8ms p99=29ms p99-after=28ms amplification=1.039 stop(b3)=100ms stop(b4)=700ms back(b4)=1.5s
//	ours targets: met
//
// Those are the figures of one run of its test, which runs the program on
// synctest's virtual clock in about a second. Requests that meet at the
// same virtual instant (a hedge's timer and an answer, say) may be taken
// in either order, and the balancers draw at random, so a run's figures
// move a little: over ten runs, ours was 99.97% or 99.98% successful with
// an amplification of 1.020 to 1.026, and met its targets each time;
// failsafe-go 95.87% to 97.02% with 1.034 to 1.047. stop(b3) moved from
// 100ms to 700ms, and back(b4) from 0s to 3.7s, as it depends on when a
// breaker's jittered delay ends. In real time the program takes the run's
// length, 30s.
//
// # The experiment
//
// Five backends, served in memory (the work is a sleep, so the figures do
// not depend on the machine): each answers in 5ms plus an exponential
// tail of mean 5ms, drawn from a seeded source of its own.
//
//   - b0 and b1 are healthy.
//   - b2 answers 503 to half its requests, at random.
//   - b3 stops answering at 10s: a request it gets from then on waits
//     until its client gives up.
//   - b4 answers 503 at once (in 1ms) until 20s, then recovers.
//
// The load is an open loop of 200 GET requests a second for 30s, 6,000
// in all, one at a random instant in each 5ms, the same for every client;
// each client gives up after a second. The healthy line is the first
// client over five healthy backends: the latency the others are measured
// against.
//
// The clients, each over its own backends:
//
//   - p2c: towerhttp's BalancedTransport, a P2C over one endpoint per
//     backend, each with PeakEwma's load; a request is sent once.
//   - p2c+retry: the same, under a Retry of every error and 5xx, up to
//     three attempts, on tower's default budget (10s, 10 a second, 20%):
//     what tower offers.
//   - ours: per backend, a circuit breaker (package breaker: 5 failures
//     in a row, or a fifth of the last 20 calls, opens it; three probes
//     must succeed to close it; its delay starts at 1s and grows to 5s;
//     a failure is what towerhttp.Failure says, or a call cancelled
//     because the hedge won: the only end a backend that hangs gives);
//     the P2C with outlier detection (package balance, at Envoy's
//     parameters but the consecutive-failure detector, which the breaker
//     does); for the whole client, towerhttp's RetryPolicy and a hedge
//     at the p99 of the last second. The retries, the hedges and the
//     breakers' probes draw on one budget, 10% of the requests and one a
//     second (see retry.DrawOnly). An open breaker makes its endpoint not
//     ready, so the balancer passes it over, and a half-open one lets its
//     probes through only.
//   - failsafe: failsafe-go v0.9.8 over the same P2C: per backend, its
//     circuit breaker through failsafehttp, opened by 5 failures in a row
//     for 5s; for the whole client, failsafehttp's retry policy and a
//     hedge at the p95 of recent latencies, both on one of its budgets at
//     its defaults. failsafe-go has neither a balancer nor readiness: an
//     open breaker fails its request at once, the retry sends it again,
//     and the balancer, which sees an endpoint answering fast, may well
//     choose it again.
//
// # The figures
//
// success is the share of requests answered 200 within their second. p50
// and p99 are over all requests, answered or not, from the instant each
// was due. p99-after is the p99 of the requests sent from 11s to 20s,
// once b3 is out and while b4 is still failing. amplification is the
// number of requests the backends got, per request sent. stop(b3) is the
// time from b3's death to the first half-second in which it is sent
// nothing (a breaker's probe may reach it later); stop(b4) the same from
// the start of the run; back(b4) the time from b4's recovery to the first
// half-second in which it gets at least a tenth of the requests, half its
// share. Windows start every 100ms.
//
// The targets for ours: success at least 99.9%, amplification at most
// 1.15, p99-after within twice the healthy p99, and success and
// amplification better than failsafe-go's in the same run.
//
// # What the figures say
//
// A balancer alone stops sending to a backend that hangs within a few
// hundred milliseconds: PeakEwma counts its requests in flight. But a
// backend that fails fast looks like the fastest of all: P2C sends it
// more than its share, a third of the requests fail, and tower's retry,
// bounded by its budget, recovers only part of them. Ours takes b4 out at
// its fifth failure and b2 after a few of its failures, lets b4 back
// within a breaker's delay of its recovery, and spends 2 to 3% of extra
// requests on retries, hedges and probes. failsafe-go's breakers open as
// quickly, but an open breaker is an error, not a backend left out: the
// balancer keeps choosing the fast-failing endpoint, and the retries
// that follow run out of budget.
//
// # The test
//
// main_test.go runs the program on synctest's virtual clock and checks
// each line's form and the verdict: ours meets its targets.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// result is one strategy's run.
type result struct {
	name  string
	role  role
	stats stats
}

// measure runs the healthy baseline and every strategy at once, each with
// its own backends and the same load.
func measure() (healthy stats, results []result) {
	ss := strategies()
	results = make([]result, len(ss))
	sched := schedule()
	start := time.Now()
	var wg sync.WaitGroup
	wg.Go(func() {
		b := newBackends(start, true)
		client, stop := p2c(b)
		out := drive(client, start, sched)
		stop()
		healthy = summarize(out, b.sends())
	})
	for i, s := range ss {
		wg.Go(func() {
			b := newBackends(start, false)
			client, stop := s.client(b)
			out := drive(client, start, sched)
			stop()
			results[i] = result{name: s.name, role: s.role, stats: summarize(out, b.sends())}
		})
	}
	wg.Wait()
	return healthy, results
}

// run measures, and prints a line for the healthy run and one per
// strategy, then whether ours met its targets.
func run(w io.Writer) error {
	healthy, results := measure()
	fmt.Fprintf(w, "%-9s success=%.2f%% p50=%v p99=%v\n", "healthy", 100*healthy.success, ms(healthy.p50), ms(healthy.p99))
	for _, r := range results {
		fmt.Fprintln(w, line(r.name, r.stats))
	}
	for _, r := range results {
		if r.role == ourOwn {
			fmt.Fprintln(w, verdict(r.name, misses(r.stats, healthy, results)))
		}
	}
	return nil
}

// The targets of the full stack.
const (
	minSuccess           = 0.999
	maxAmplification     = 1.15
	maxP99AfterOfHealthy = 2 // times the healthy run's p99
)

// misses returns the targets s missed: success, amplification and p99
// once the failed backends are out, and success and amplification at
// least as good as every peer's.
func misses(s stats, healthy stats, results []result) []string {
	var m []string
	if s.success < minSuccess {
		m = append(m, fmt.Sprintf("success %.2f%% < %.1f%%", 100*s.success, 100*minSuccess))
	}
	if s.amplification > maxAmplification {
		m = append(m, fmt.Sprintf("amplification %.2f > %.2f", s.amplification, maxAmplification))
	}
	if s.p99After > maxP99AfterOfHealthy*healthy.p99 {
		m = append(m, fmt.Sprintf("p99-after %v > %d x healthy p99 %v", ms(s.p99After), maxP99AfterOfHealthy, ms(healthy.p99)))
	}
	for _, r := range results {
		if r.role != peer {
			continue
		}
		if s.success < r.stats.success {
			m = append(m, "success below "+r.name+"'s")
		}
		if s.amplification > r.stats.amplification {
			m = append(m, "amplification above "+r.name+"'s")
		}
	}
	return m
}

// verdict is the line that says whether name met its targets.
func verdict(name string, missed []string) string {
	if len(missed) == 0 {
		return name + " targets: met"
	}
	return name + " targets: missed " + strings.Join(missed, ", ")
}
