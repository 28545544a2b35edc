package main

import (
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The backends, by host: two healthy, one that fails half its requests,
// one that stops answering at 10s, and one that fails everything until
// 20s and then recovers.
const (
	flaky    = "b2" // answers 503 to half its requests, at random
	dies     = "b3" // from 10s on, never answers: its clients wait until they give up
	recovers = "b4" // answers 503 at once until 20s, then as the healthy ones do

	diesAt     = 10 * time.Second
	recoversAt = 20 * time.Second
)

// hosts are the five backends' names, which are their URLs' hosts.
var hosts = []string{"b0", "b1", flaky, dies, recovers}

// A backend's latency when it answers: 5ms, plus an exponential tail of
// mean 5ms, drawn from its own seeded source. The work is a sleep, which
// needs no CPU, so the figures do not depend on the machine.
const (
	minLatency  = 5 * time.Millisecond
	meanTail    = 5 * time.Millisecond
	failLatency = time.Millisecond // how long the down backend takes to say 503
)

// backends is an http.RoundTripper that serves every request in memory,
// as the backend its URL's host names would, and records when each
// backend was sent a request.
type backends struct {
	start   time.Time
	healthy bool // none of them fails: the run the others are compared with

	mu   sync.Mutex
	rngs map[string]*rand.Rand
	sent map[string][]time.Duration // when each backend was sent a request, from the start
}

func newBackends(start time.Time, healthy bool) *backends {
	b := &backends{start: start, healthy: healthy, rngs: make(map[string]*rand.Rand), sent: make(map[string][]time.Duration)}
	for i, h := range hosts {
		b.rngs[h] = rand.New(rand.NewPCG(seed, uint64(i)))
	}
	return b
}

// RoundTrip answers req as its backend does.
func (b *backends) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Host
	b.mu.Lock()
	at := time.Since(b.start)
	b.sent[host] = append(b.sent[host], at)
	rng := b.rngs[host]
	latency := minLatency + time.Duration(rng.ExpFloat64()*float64(meanTail))
	coin := rng.IntN(2)
	b.mu.Unlock()
	healthy := b.healthy
	switch {
	case !healthy && host == dies && at >= diesAt:
		<-req.Context().Done() // a backend that died holds the connection open
		return nil, req.Context().Err()
	case !healthy && host == recovers && at < recoversAt:
		return b.answer(req, failLatency, http.StatusServiceUnavailable)
	case !healthy && host == flaky && coin == 0:
		return b.answer(req, latency, http.StatusServiceUnavailable)
	}
	return b.answer(req, latency, http.StatusOK)
}

// answer waits latency and answers req with code, or gives up with the
// request's context.
func (b *backends) answer(req *http.Request, latency time.Duration, code int) (*http.Response, error) {
	t := time.NewTimer(latency)
	defer t.Stop()
	select {
	case <-t.C:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	return &http.Response{
		StatusCode: code,
		Status:     http.StatusText(code),
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{},
		Body:    io.NopCloser(strings.NewReader("")),
		Request: req,
	}, nil
}

// sends returns when each backend was sent a request, from the start.
func (b *backends) sends() map[string][]time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sent
}
