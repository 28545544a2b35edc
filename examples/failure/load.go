package main

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// The load: an open loop of rate requests per second for runLength, each
// a GET whose client gives up after clientTimeout.
const (
	rate          = 200
	interval      = time.Second / rate // 5ms
	runLength     = 30 * time.Second
	clientTimeout = time.Second

	seed = 2026 // the schedule's and the backends' random sources
)

// schedule returns when each request is sent, from the start of the run:
// one at a random instant in each interval of 5ms, so exactly 200 per
// second. Every strategy gets the same.
func schedule() []time.Duration {
	rng := rand.New(rand.NewPCG(seed, seed))
	n := rate * int(runLength/time.Second)
	at := make([]time.Duration, n)
	for i := range at {
		at[i] = time.Duration(i)*interval + time.Duration(rng.Int64N(int64(interval)))
	}
	return at
}

// outcome is what one request got.
type outcome struct {
	due     time.Duration // when it was sent, from the start of the run
	latency time.Duration // from due to its answer, or to its client giving up
	ok      bool          // answered 200 in time
}

// drive sends the requests of sched through client, each at its instant
// from start, without waiting for earlier answers, and returns what each
// got once all have their outcome.
func drive(client http.RoundTripper, start time.Time, sched []time.Duration) []outcome {
	out := make([]outcome, len(sched))
	var wg sync.WaitGroup
	for i, at := range sched {
		due := start.Add(at)
		time.Sleep(time.Until(due))
		wg.Go(func() { out[i] = send(client, due, at) })
	}
	wg.Wait()
	return out
}

// send sends one request, due at due (at from the start), and waits for
// its answer.
func send(client http.RoundTripper, due time.Time, at time.Duration) outcome {
	ctx, cancel := context.WithDeadline(context.Background(), due.Add(clientTimeout))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://service/item", nil)
	if err != nil {
		panic(err)
	}
	res, err := client.RoundTrip(req)
	o := outcome{due: at}
	if err == nil {
		res.Body.Close()
		o.ok = res.StatusCode == http.StatusOK
	}
	o.latency = time.Since(due)
	return o
}
