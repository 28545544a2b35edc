package main

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/towergo/tower"
)

// The load: an open loop of rate requests per second over the whole run,
// above the server's capacity in every phase.
const (
	rate     = 800
	interval = time.Second / rate // 1.25ms

	// clientTimeout is how long a client waits for its answer: ten times
	// the objective. A later answer is useless, and a client that waited
	// longer would only show the queue growing.
	clientTimeout = time.Second

	seed = 2024 // the schedule's random source
)

// schedule returns when each request is sent, from the start of the run:
// one at a random instant in each interval of 1.25ms, so exactly 800 per
// second, and no two at the same instant. Every strategy gets the same.
func schedule() []time.Duration { return scheduleFor(rate, runLength(), seed) }

// scheduleFor returns the instants of an open loop of rate requests per
// second for length, from a source seeded with s: one at a random instant
// in each interval of a second over rate.
func scheduleFor(rate int, length time.Duration, s uint64) []time.Duration {
	rng := rand.New(rand.NewPCG(s, s))
	interval := time.Second / time.Duration(rate)
	at := make([]time.Duration, length/interval)
	for i := range at {
		at[i] = time.Duration(i)*interval + time.Duration(rng.Int64N(int64(interval)))
	}
	return at
}

// kind is how a request ended.
type kind uint8

const (
	served kind = iota // answered
	shed               // turned away at once: the server was full
	failed             // its client gave up, or another error
)

// outcome is what one request got.
type outcome struct {
	due     time.Duration // when it was sent, from the start of the run
	latency time.Duration // from due to its answer, or to its client giving up
	kind    kind
	prio    tower.Priority
}

// drive sends the requests of sched to svc, each at its instant from
// start and with priority prio, without waiting for earlier answers (an
// open loop), and returns what each got. Latencies count from the instant
// a request was due, so a generator that falls behind does not hide the
// server's delays. Each request gives up after clientTimeout, and drive
// returns once all have their outcome.
func drive(svc tower.Service[int, struct{}], start time.Time, sched []time.Duration, prio tower.Priority) []outcome {
	out := make([]outcome, len(sched))
	var wg sync.WaitGroup
	for i, at := range sched {
		due := start.Add(at)
		time.Sleep(time.Until(due))
		wg.Go(func() { out[i] = send(svc, i, due, at, prio) })
	}
	wg.Wait()
	return out
}

// send sends request i, due at due (at from the start), and waits for its
// answer.
func send(svc tower.Service[int, struct{}], i int, due time.Time, at time.Duration, prio tower.Priority) outcome {
	ctx, cancel := context.WithDeadline(tower.WithPriority(context.Background(), prio), due.Add(clientTimeout))
	defer cancel()
	_, err := tower.Call(ctx, svc, i)
	o := outcome{due: at, latency: time.Since(due), prio: prio}
	switch {
	case err == nil:
		o.kind = served
	case tower.IsOverloaded(err):
		o.kind = shed
	default:
		o.kind = failed
	}
	return o
}
