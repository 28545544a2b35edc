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

// requests is how many requests the run sends: 24,000.
func requests() int { return rate * int(runLength()/time.Second) }

// schedule returns when each request is sent, from the start of the run:
// one at a random instant in each interval of 1.25ms, so exactly 800 per
// second, and no two at the same instant. Every strategy gets the same.
func schedule() []time.Duration {
	rng := rand.New(rand.NewPCG(seed, seed))
	at := make([]time.Duration, requests())
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
}

// drive sends the requests of sched to svc, each at its instant from
// start, without waiting for earlier answers (an open loop), and returns
// what each got. Latencies count from the instant a request was due, so a
// generator that falls behind does not hide the server's delays. Each
// request gives up after clientTimeout, and drive returns once all have
// their outcome.
func drive(svc tower.Service[int, struct{}], start time.Time, sched []time.Duration) []outcome {
	out := make([]outcome, len(sched))
	var wg sync.WaitGroup
	for i, at := range sched {
		due := start.Add(at)
		time.Sleep(time.Until(due))
		wg.Go(func() { out[i] = send(svc, i, due, at) })
	}
	wg.Wait()
	return out
}

// send sends request i, due at due (at from the start), and waits for its
// answer.
func send(svc tower.Service[int, struct{}], i int, due time.Time, at time.Duration) outcome {
	ctx, cancel := context.WithDeadline(context.Background(), due.Add(clientTimeout))
	defer cancel()
	_, err := tower.Call(ctx, svc, i)
	o := outcome{due: at, latency: time.Since(due)}
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
