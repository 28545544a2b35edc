package main

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"
)

// The load: an open loop of rate requests per second for duration.
const (
	rate     = 400
	duration = 10 * time.Second
	requests = rate * int(duration/time.Second) // 4,000
	interval = time.Second / rate               // 2.5ms

	// clientTimeout is how long a client waits for its answer. A response
	// after a second is useless (see useful), so a client that waited
	// longer would only show the queue growing; one that gave up at one
	// second would turn every late response into an error, and hide how
	// late they were. Two seconds shows both: that the unprotected
	// server's answers come late, and that many never come. It also
	// bounds the unprotected run: every request has its answer, or has
	// given up, two seconds after the last one is sent.
	clientTimeout = 2 * time.Second

	// useful is how late a response may be and still count as goodput.
	useful = time.Second

	seed = 2024 // the schedule's random source
)

// schedule returns when each of the requests is sent, from the start of
// the run: one at a random instant in each interval of 2.5ms, so exactly
// 400 per second, and no two at the same instant.
func schedule() []time.Duration {
	rng := rand.New(rand.NewPCG(seed, seed))
	at := make([]time.Duration, requests)
	for i := range at {
		at[i] = time.Duration(i)*interval + time.Duration(rng.Int64N(int64(interval)))
	}
	return at
}

// outcome is what one request got.
type outcome struct {
	latency time.Duration // from the instant it was due to the end of its answer
	status  int           // 0 if it got no answer
}

// drive sends the requests to url through rt, each at its instant, without
// waiting for earlier answers (an open loop), and returns what each got.
// Latencies count from the instant a request was due, so a generator that
// falls behind does not hide the server's delays. Each request gives up
// after clientTimeout, and drive returns once all have their outcome.
func drive(rt http.RoundTripper, url string) []outcome {
	out := make([]outcome, requests)
	var wg sync.WaitGroup
	start := time.Now()
	for i, at := range schedule() {
		time.Sleep(time.Until(start.Add(at)))
		due := start.Add(at)
		wg.Go(func() { out[i] = send(rt, url, due) })
	}
	wg.Wait()
	return out
}

// send sends one GET and reads its answer.
func send(rt http.RoundTripper, url string, due time.Time) outcome {
	ctx, cancel := context.WithDeadline(context.Background(), due.Add(clientTimeout))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		panic(err)
	}
	resp, err := rt.RoundTrip(req)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	o := outcome{latency: time.Since(due)}
	if err == nil {
		o.status = resp.StatusCode
	}
	return o
}

// stats are the figures printed for a run.
type stats struct {
	goodput int           // successful answers within useful, per second
	p99     time.Duration // of every request's latency, answered or not
	errors  int           // percent of requests without a 200
	shed    int           // percent of requests answered 503
}

func summarize(out []outcome) stats {
	var good, failed, shed int
	latencies := make([]time.Duration, len(out))
	for i, o := range out {
		latencies[i] = o.latency
		switch {
		case o.status == http.StatusOK && o.latency <= useful:
			good++
		case o.status == http.StatusOK:
		case o.status == http.StatusServiceUnavailable:
			shed++
			failed++
		default:
			failed++
		}
	}
	slices.Sort(latencies)
	n := len(out)
	return stats{
		goodput: good / int(duration/time.Second), // whole requests per second, rounded down
		p99:     latencies[(n*99+99)/100-1],       // nearest rank
		errors:  roundDiv(100*failed, n),
		shed:    roundDiv(100*shed, n),
	}
}

func roundDiv(a, b int) int { return (2*a + b) / (2 * b) }
