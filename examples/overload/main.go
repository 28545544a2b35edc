// Overload offers a server twice the load it can serve, once bare, once
// behind a towerhttp stack, LoadShed > Timeout > ConcurrencyLimit(8), and
// once behind the same stack with an adaptive limit in place of the static
// one, nothing tuned, and prints what the clients got:
//
//	unprotected: goodput=39/s p99=2000ms errors=80%
//	protected: goodput=200/s p99=39ms shed=50%
//	adaptive: goodput=200/s p99=40ms shed=50%
//
// Those are the figures of its test, which runs the same program on
// synctest's virtual clock. In real time, over loopback, the program
// takes about 33 seconds, and three runs on a 2-core VM printed:
//
//	unprotected: goodput=39/s p99=2001ms errors=80%
//	protected: goodput=200/s p99=41ms shed=50%
//	adaptive: goodput=200/s p99=41ms shed=50%
//
//	unprotected: goodput=39/s p99=2001ms errors=80%
//	protected: goodput=200/s p99=43ms shed=50%
//	adaptive: goodput=198/s p99=41ms shed=50%
//
//	unprotected: goodput=39/s p99=2001ms errors=80%
//	protected: goodput=200/s p99=44ms shed=50%
//	adaptive: goodput=199/s p99=41ms shed=50%
//
// The milliseconds the virtual clock does not have are the network's and
// the scheduler's.
//
// # The experiment
//
// The server is a pool of two workers, each serving one request at a time
// in 10ms: it can serve 200 requests per second, however many it is sent.
// A request waits for a free worker, first come first served, for as long
// as its client waits for it. The work is a sleep, which needs no CPU, so
// the figures do not depend on the machine, and a timer that wakes late
// does not slow the worker down (see worker.serve).
//
// The load generator sends 400 requests per second for 10 seconds, 4,000
// in all, one at a random instant in each interval of 2.5ms, to a port of
// 127.0.0.1. It is an open loop: each request goes at its instant,
// whatever happened to the earlier ones, as requests from many
// independent users do. A client waits two seconds for its answer, then
// gives up. A response that comes more than a second after its request
// was due is useless: goodput counts the 200s that came within a second,
// per second of the run. p99 is the 99th percentile of the time every
// request waited, from the instant it was due to the end of its answer,
// or to the moment its client gave up.
//
// # Why the bare server collapses
//
// Requests come at 400 per second and leave at 200: the queue for the
// workers grows by 200 requests a second, and so does the wait, by a
// second every second. A request sent at 0.5s waits half a second; one
// sent at 1s, a second; one sent at 2s, two. From then on every request
// is at the head of the queue, two seconds old, when its client gives up,
// or has given up by the time its 10ms are done: the workers are busy all
// the time, on requests whose clients are leaving, and nothing they serve
// arrives in time. Latency grows without bound, held only by the clients'
// patience, and everything past the first second is useless. The 39
// requests per second of goodput are those sent in the first second,
// before the queue held a second's worth of work, spread over the ten;
// 80% of the requests get no answer at all.
//
// Two seconds is the clients' timeout because a response later than a
// second is useless anyway, and a timeout of one second would only turn
// every late answer into an error and hide how late it was. It also bounds
// the run: two seconds after the last request, every client has its
// answer or has gone.
//
// # Why the protected one does not
//
// The ConcurrencyLimit lets eight requests into the handler: two with a
// worker, six waiting for one. That is Little's law: a capacity of 200
// per second times a wait of four service times, 40ms, is eight in
// flight. Six waiting are enough that a worker never waits for the next
// request to arrive, so the server serves its full 200 per second; and no
// request waits more than three service times for a worker, so each is
// answered within 40ms. The LoadShed in front answers every request the
// limit cannot take now with 503 and Retry-After, at once, before the
// request is read: the excess, half the load, is turned away in
// microseconds instead of queueing, and its clients know at once that
// they should try later or elsewhere. The Timeout, 250ms, is far above
// what the limit lets a request take: it is there for a worker that hangs.
// It sits above the limit, as package towerhttp recommends: the wait for
// the limit's permit happens in Ready, which no Timeout times, and above
// the limit a handler the Timeout gives up on keeps its permit until it
// returns, so that the limit counts the handlers that really run.
//
// The queue cannot grow, so the wait cannot either: goodput is the
// server's capacity, and p99 is a fiftieth of the bare server's.
//
// # The adaptive limit
//
// The third server has, in place of ConcurrencyLimit(8), package
// adaptive's limit with its defaults and its algorithm for a server,
// Gradient2: nobody sized it. Its first window is a probe, which measures
// the no-load latency, 10ms; then it lets 20 in flight, two served and
// the rest waiting, and its windows, short while the limit settles, end
// as soon as a run of calls is twice as slow as the last window: by
// Little's law the limit falls to 10, then 5, and after a second probe
// to 4 (3 in flight for normal priority, the reserve aside), 0.4s after
// the first request, where it stays, latency about 1.4 times the no-load
// latency. Goodput is the capacity, and the p99, 40ms, set in those first
// 0.4s, is the statically sized limit's: what Little's law gave for 8 in
// flight, found with no number chosen.
//
// # The test
//
// main_test.go runs the same program on synctest's virtual clock, with a
// RoundTripper that serves each request in memory instead of over TCP
// (net/http's sockets cannot run in a synctest bubble): the same handlers,
// the same stacks, the same generator and the same figures, in about a
// quarter of a second. It checks the three lines above exactly, and the
// goals: each protected server's goodput at least 90% of its capacity,
// and its p99 at most a tenth of the bare server's.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	run(os.Stdout, loopback)
}

// serveFunc starts a server for h and returns how to reach it, and a
// function that stops it once every request it got has been answered.
type serveFunc func(h http.Handler) (rt http.RoundTripper, url string, stop func())

// result is one server's run.
type result struct {
	name  string
	stats stats
}

// line is how a result prints.
func (r result) line() string {
	last := fmt.Sprintf("errors=%d%%", r.stats.errors)
	if r.name != "unprotected" {
		last = fmt.Sprintf("shed=%d%%", r.stats.shed)
	}
	return fmt.Sprintf("%s: goodput=%d/s p99=%dms %s", r.name, r.stats.goodput, r.stats.p99.Milliseconds(), last)
}

// measure drives each server, bare and protected, with the load.
func measure(serve serveFunc) []result {
	var results []result
	for _, server := range []struct {
		name    string
		handler http.Handler
	}{
		{"unprotected", newBackend()},
		{"protected", protect(newBackend())},
		{"adaptive", protectAdaptive(newBackend())},
	} {
		rt, url, stop := serve(server.handler)
		s := summarize(drive(rt, url))
		stop()
		results = append(results, result{server.name, s})
	}
	return results
}

// run measures and prints a line for each server.
func run(w io.Writer, serve serveFunc) {
	for _, r := range measure(serve) {
		fmt.Fprintln(w, r.line())
	}
}

// loopback serves h with net/http on a port of 127.0.0.1, the only
// address the requests go to, over TCP.
func loopback(h http.Handler) (http.RoundTripper, string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: clientTimeout}
	go srv.Serve(ln)
	// Enough idle connections for every request the bare server holds at
	// once (clientTimeout × rate), so that connections are used again
	// rather than opened for each request.
	n := int(clientTimeout/time.Second) * rate
	tr := &http.Transport{MaxIdleConns: n, MaxIdleConnsPerHost: n}
	return tr, "http://" + ln.Addr().String() + "/", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		tr.CloseIdleConnections()
	}
}
