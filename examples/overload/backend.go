package main

import (
	"io"
	"net/http"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towerhttp"
)

// The server's capacity: workers, each taking serviceTime per request.
const (
	workers     = 2
	serviceTime = 10 * time.Millisecond // so 200 requests/s in all
)

// The protected server's stack.
const (
	// inFlight is the ConcurrencyLimit: by Little's law, the capacity
	// (200/s) times the wait a request may have (four service times,
	// 40ms) is eight requests in flight. Two are served, six wait for a
	// worker: enough that a worker never waits for the next request to
	// arrive, few enough that none waits long.
	inFlight = 8
	// handlerTimeout bounds a request's time in the handler, far above
	// what the limit lets it take (50ms): it is there for a worker that
	// hangs, not for the queue.
	handlerTimeout = 250 * time.Millisecond
)

// backend is a server with real capacity: a pool of workers, each serving
// one request at a time in serviceTime. A request waits for a free worker,
// first come first served, as long as its client is there; the pool's
// size, not the requests' number, bounds how many are served per second.
type backend struct {
	pool chan *worker
}

// worker is one of the pool's workers.
type worker struct {
	free time.Time // when it finished its last request
}

func newBackend() *backend {
	b := &backend{pool: make(chan *worker, workers)}
	for range workers {
		b.pool <- &worker{}
	}
	return b
}

// ServeHTTP waits for a worker, has it serve the request and answers "ok";
// a request whose client has gone while it waited is dropped.
func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	queued := time.Now()
	var wk *worker
	select {
	case wk = <-b.pool:
	case <-r.Context().Done():
		return
	}
	wk.serve(queued)
	b.pool <- wk
	io.WriteString(w, "ok")
}

// serve takes serviceTime of the worker's time for a request that began
// waiting for it at queued. The work is a sleep, which needs no CPU, so
// the figures do not depend on the machine; and a request that waited
// for the worker starts when the worker became free, not when its sleep
// happened to wake, so a late timer does not make the worker slower than
// 100 requests per second.
func (wk *worker) serve(queued time.Time) {
	start := queued
	if wk.free.After(start) {
		start = wk.free
	}
	wk.free = start.Add(serviceTime)
	time.Sleep(time.Until(wk.free))
}

// protect returns h behind LoadShed > Timeout(handlerTimeout) >
// ConcurrencyLimit(inFlight).
func protect(h http.Handler) http.Handler {
	return towerhttp.NewHandler(h, tower.Stack(
		loadshed.NewLayer[*http.Request, towerhttp.Response](),
		timeout.NewLayer[*http.Request, towerhttp.Response](handlerTimeout),
		limit.NewConcurrencyLayer[*http.Request, towerhttp.Response](inFlight),
	))
}

// protectAdaptive returns h behind LoadShed > Timeout(handlerTimeout) >
// an adaptive limit with nothing tuned: package adaptive's defaults and
// its algorithm for a server, Gradient2, in place of the
// ConcurrencyLimit(inFlight) that Little's law sized.
func protectAdaptive(h http.Handler) http.Handler {
	return towerhttp.NewHandler(h, tower.Stack(
		loadshed.NewLayer[*http.Request, towerhttp.Response](),
		timeout.NewLayer[*http.Request, towerhttp.Response](handlerTimeout),
		adaptive.NewLayer[*http.Request, towerhttp.Response](adaptive.Gradient2()),
	))
}
