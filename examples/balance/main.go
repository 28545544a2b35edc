// Balance runs the "one slow backend" experiment of Linkerd's "Beyond
// Round Robin" on this module's balancers: ten backends, nine answering in
// 2ms and one in 200ms, sixteen callers each sending its next request as
// soon as the last one is answered, 1,600 requests per strategy. It prints,
// for each strategy, the 50th, 99th and 99.9th percentiles of the latency
// the callers saw, and the share of the requests the slow backend served.
// On synctest's virtual clock, where its test runs it, it prints:
//
//	roundrobin: p50=2ms p99=200ms p99.9=200ms slow=10.0%
//	p2c-pending: p50=2ms p99=2ms p99.9=200ms slow=0.4%
//	p2c-peakewma: p50=2ms p99=2ms p99.9=200ms slow=0.2%
//
// and, scaled up to 10,000 requests:
//
//	roundrobin: p50=2ms p99=200ms p99.9=200ms slow=10.0%
//	p2c-pending: p50=2ms p99=2ms p99.9=200ms slow=0.3%
//	p2c-peakewma: p50=2ms p99=2ms p99.9=2ms slow=0.0%
//
// In real time the figures move with the machine: a sleep of 2ms that
// wakes late on a busy machine shows in the percentiles of the fast
// backends' requests.
//
// Round robin sends the slow backend its tenth of the requests whatever it
// does with them: 10% of the requests take 200ms, so everything from the
// 90th percentile up is slow.
//
// The power of two choices over pending requests (P2C + PendingRequests)
// compares how many requests each of the two endpoints drawn has in
// flight. Sixteen callers over ten backends leave a fast backend one or two
// at a time, and the slow one's pile grows to as many, so it keeps getting
// a request whenever it is drawn with a fast backend that has as many in
// flight: 6 of 1,600 requests, 26 of 10,000, about one in 400. Below 1%,
// the 99th percentile stays at 2ms here; the 99.9th does not.
//
// Over PeakEwma, the slow backend's cost is its 200ms round-trip time from
// its first answer on, a hundred times a fast backend's, and any pair that
// holds a fast backend goes to it. The slow backend serves only the
// requests it was sent before its first answer came back, while its cost
// was the 30ms default RTT like everyone's: 4 requests, in either run. So
// its share falls as the run goes on, and at 10,000 requests even the
// 99.9th percentile is 2ms. That is Linkerd's result: round robin degrades
// from p95, least-loaded from p99 (here, from p99.9), Peak-EWMA only at
// p99.9 or beyond. The goal was PeakEwma's p99 within 5 times the fast
// backends' latency; it is the fast backends' latency.
//
// The callers are a closed loop of sixteen: a dispatcher sends a request
// as soon as one of the sixteen in flight is answered, each on its own
// goroutine. Its test runs the same program on synctest's virtual clock,
// where the backends' latencies are exact; it waits for every goroutine to
// block after each request is sent and after each answer is taken in, so
// the balancers see the same state at each pick from one run to the next,
// and with their random source seeded the figures repeat exactly. It checks
// the lines above.
package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/load"
)

const (
	backends = 10
	slowOne  = backends - 1 // the index of the slow backend
	fast     = 2 * time.Millisecond
	slow     = 200 * time.Millisecond
	callers  = 16
	requests = 1600 // per strategy

	// PeakEwma's parameters, Linkerd's.
	defaultRTT = 30 * time.Millisecond
	decay      = 10 * time.Second
)

func main() {
	run(os.Stdout, requests, func() {})
}

// backend i answers with its index, after 2ms, or 200ms for the slow one.
func backend(i int) tower.Service[int, int] {
	d := fast
	if i == slowOne {
		d = slow
	}
	return tower.ServiceFunc[int, int](func(context.Context, int) (int, error) {
		time.Sleep(d)
		return i, nil
	})
}

// balancer is what each strategy builds over the backends.
type balancer interface {
	tower.Service[int, int]
	Close() error
}

// strategies build a fresh balancer over fresh backends; the P2C ones draw
// with the same seeded source.
var strategies = []struct {
	name  string
	build func() balancer
}{
	{"roundrobin", func() balancer {
		return balance.NewRoundRobin(discover.NewList(endpoints(func(s tower.Service[int, int]) tower.Service[int, int] { return s })...))
	}},
	{"p2c-pending", func() balancer {
		return balance.NewP2C(discover.NewList(endpoints(func(s tower.Service[int, int]) load.Service[int, int] {
			return load.NewPendingRequests(s)
		})...), balance.WithRand(rand.New(rand.NewPCG(1, 2))))
	}},
	{"p2c-peakewma", func() balancer {
		return balance.NewP2C(discover.NewList(endpoints(func(s tower.Service[int, int]) load.Service[int, int] {
			return load.NewPeakEwma(s, defaultRTT, decay)
		})...), balance.WithRand(rand.New(rand.NewPCG(1, 2))))
	}},
}

// endpoints returns the backends, each wrapped by wrap.
func endpoints[S any](wrap func(tower.Service[int, int]) S) []S {
	eps := make([]S, backends)
	for i := range eps {
		eps[i] = wrap(backend(i))
	}
	return eps
}

// run sends n requests through each strategy and prints a line for each.
// settle is called after each request is sent and after each answer is
// taken in, so that the program can run in step with a virtual clock.
func run(w io.Writer, n int, settle func()) {
	for _, s := range strategies {
		bal := s.build()
		r := simulate(bal, n, settle)
		bal.Close()
		fmt.Fprintf(w, "%s: p50=%s p99=%s p99.9=%s slow=%.1f%%\n",
			s.name, ms(r.quantile(500)), ms(r.quantile(990)), ms(r.quantile(999)), 100*float64(r.slow)/float64(n))
	}
}

// result is what the callers saw.
type result struct {
	latencies []time.Duration // sorted
	slow      int             // requests the slow backend served
}

// quantile returns the latency at permille/1000, nearest rank.
func (r result) quantile(permille int) time.Duration {
	n := len(r.latencies)
	return r.latencies[(n*permille+999)/1000-1]
}

func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Round(time.Millisecond).Milliseconds()) }

// simulate sends n requests through bal, at most callers at a time: a new
// request as soon as one is answered.
func simulate(bal balancer, n int, settle func()) result {
	ctx := context.Background()
	type outcome struct {
		latency time.Duration
		backend int
	}
	answers := make(chan outcome, callers)
	var r result
	take := func() {
		o := <-answers
		// Every other answer due at this instant is taken in before the
		// next request is sent, so that the balancer sees them all.
		settle()
		r.latencies = append(r.latencies, o.latency)
		if o.backend == slowOne {
			r.slow++
		}
	}
	inFlight := 0
	for i := range n {
		if inFlight == callers {
			take()
			inFlight--
		}
		start := time.Now()
		p, err := bal.Ready(ctx)
		if err != nil {
			panic(err)
		}
		go func() {
			b, err := p.Call(ctx, i)
			if err != nil {
				panic(err)
			}
			answers <- outcome{latency: time.Since(start), backend: b}
		}()
		inFlight++
		settle()
	}
	for ; inFlight > 0; inFlight-- {
		take()
	}
	slices.Sort(r.latencies)
	return r
}
