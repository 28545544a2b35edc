package main

import "time"

// A scenario is one column of the benchmark's story: what the backends
// do, what load comes in, what happens to a backend during the run, and
// what the peers are told that towerproxy is not.
type scenario struct {
	name  string
	about string
	// backend is what every backend does; first, if set, is what backend
	// 0 does instead.
	backend backendSpec
	first   *backendSpec
	// conns > 0 is a closed loop of that many connections (wrk); rate > 0
	// is an open loop of that many requests per second, each sent at its
	// time whatever the answers before it.
	conns int
	rate  float64
	// events happen to backend 0 at these shares of the measured window.
	events []event
	// direct adds a row with the load sent to the backends themselves,
	// in turn, with no proxy.
	direct bool
	// saturate > 0 makes the direct row a closed loop of that many
	// connections over the backends in turn, more than they serve at
	// once: what they serve when they are never idle, on this machine in
	// this run. A proxy's goodput is judged against it where it is less
	// than served, which assumes that a 10 ms sleep lasts 10 ms.
	saturate int
	// The oracles, what a peer is told to be at its best here and
	// towerproxy is not: the latency above which a backend counts as
	// failing, and each backend's capacity (requests at once).
	slowAfter time.Duration
	capacity  int
	// served is what the backends can serve per second, for the goodput
	// target; 0 if they are not bounded.
	served float64
}

// backendSpec is one backend's behaviour, as proxybackend's flags set it.
type backendSpec struct {
	latency time.Duration
	workers int     // requests served at once; 0: no bound
	fail    float64 // share answered 503 at once
}

// An event is something done to backend 0 during the measured window.
type event struct {
	at   float64 // share of the window
	kind string  // "kill", "restart" or "workers=N"
}

// scenarios are the issue's, in its order. slow1, err1 and kill1 are
// light loads: a proxy that leaves the slow, failing or dead backend out
// has three others with room to spare, so what they measure is whether it
// does.
var scenarios = []scenario{
	{
		name:   "overhead",
		about:  "closed loop, 64 connections, 0 ms backends",
		conns:  64,
		direct: true,
	},
	{
		name:    "fixed5ms",
		about:   "1000/s, open loop, 5 ms backends",
		backend: backendSpec{latency: 5 * time.Millisecond},
		rate:    1000,
		direct:  true,
	},
	{
		name:      "slow1",
		about:     "400/s on 1 ms backends, backend 0 at 200 ms",
		backend:   backendSpec{latency: time.Millisecond},
		first:     &backendSpec{latency: 200 * time.Millisecond},
		rate:      400,
		slowAfter: 100 * time.Millisecond,
	},
	{
		name:    "err1",
		about:   "500/s on 1 ms backends, backend 0 answers 503 half the time",
		backend: backendSpec{latency: time.Millisecond},
		first:   &backendSpec{latency: time.Millisecond, fail: 0.5},
		rate:    500,
	},
	{
		name:     "overload",
		about:    "3200/s, twice what 4 backends of 4 workers x 10 ms serve",
		backend:  backendSpec{latency: 10 * time.Millisecond, workers: 4},
		rate:     3200,
		capacity: 4,
		served:   1600,
		direct:   true,
		saturate: 48, // 12 per backend of 4 workers
	},
	{
		name:    "kill1",
		about:   "500/s on 1 ms backends, backend 0 killed at 1/3, restarted at 2/3",
		backend: backendSpec{latency: time.Millisecond},
		rate:    500,
		events:  []event{{at: 1.0 / 3, kind: "kill"}, {at: 2.0 / 3, kind: "restart"}},
	},
	{
		name:     "drop",
		about:    "1440/s (0.9x capacity); at 1/3 backend 0's workers halve, 3% over capacity",
		backend:  backendSpec{latency: 10 * time.Millisecond, workers: 4},
		rate:     1440,
		events:   []event{{at: 1.0 / 3, kind: "workers=2"}},
		capacity: 4,
		served:   1400, // after the drop
	},
}

// spec returns backend i's behaviour in s.
func (s *scenario) spec(i int) backendSpec {
	if i == 0 && s.first != nil {
		return *s.first
	}
	return s.backend
}
