package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
)

// serviceTime is a request's work on a worker, and so the server's latency
// when nobody queues.
const serviceTime = 10 * time.Millisecond

// A phase is a stretch of the run during which the server has a fixed
// number of workers.
type phase struct {
	length  time.Duration
	workers int
}

// phases is the server's capacity over the run: 400, 200, then 600
// requests per second.
var phases = []phase{
	{10 * time.Second, 4},
	{10 * time.Second, 2},
	{10 * time.Second, 6},
}

// capacity is how many requests per second n workers serve.
func capacity(n int) int { return n * int(time.Second/serviceTime) }

// runLength is the sum of the phases' lengths.
func runLength() time.Duration {
	var d time.Duration
	for _, p := range phases {
		d += p.length
	}
	return d
}

// maxWorkers is the most workers any phase has.
func maxWorkers() int {
	n := 0
	for _, p := range phases {
		n = max(n, p.workers)
	}
	return n
}

// backend is a server with real capacity that changes over time: a pool of
// workers, each serving one request at a time in serviceTime. A request
// waits for a free worker, first come first served, as long as its client
// is there. Worker i works while the phase has more than i workers: at a
// phase's start the pool gains workers, or loses them as they finish what
// they are doing. Which workers work is decided by the virtual instants a
// request starts and ends at, never by which goroutine runs first, so the
// run is the same every time on synctest's clock.
type backend struct {
	start    time.Time
	pool     chan *worker
	inFlight atomic.Int64 // requests in the server: waiting for a worker or served

	mu     sync.Mutex
	parked []*worker // workers out of the pool until a phase has them again
}

// worker is one of the pool's workers.
type worker struct {
	index int
	free  time.Time // when it finished its last request
}

// newBackend returns a backend whose capacity follows phases from start
// on: a timer at each phase's start brings back the workers it has.
func newBackend(start time.Time) *backend {
	b := &backend{start: start, pool: make(chan *worker, maxWorkers())}
	for i := range maxWorkers() {
		wk := &worker{index: i, free: start}
		if i < phases[0].workers {
			b.pool <- wk
		} else {
			b.parked = append(b.parked, wk)
		}
	}
	var at time.Time = start
	for _, ph := range phases[:len(phases)-1] {
		at = at.Add(ph.length)
		begin := at
		time.AfterFunc(time.Until(begin), func() { b.unpark(begin) })
	}
	return b
}

// works reports whether wk is one of the workers of the phase at t.
func (b *backend) works(wk *worker, t time.Time) bool {
	var end time.Time = b.start
	for _, ph := range phases {
		end = end.Add(ph.length)
		if t.Before(end) {
			return wk.index < ph.workers
		}
	}
	return wk.index < phases[len(phases)-1].workers
}

// park takes wk out of the pool.
func (b *backend) park(wk *worker) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.parked = append(b.parked, wk)
}

// unpark returns to the pool the parked workers that the phase beginning
// at at has, free from then on.
func (b *backend) unpark(at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	keep := b.parked[:0]
	for _, wk := range b.parked {
		if !b.works(wk, at) {
			keep = append(keep, wk)
			continue
		}
		if wk.free.Before(at) {
			wk.free = at
		}
		b.pool <- wk
	}
	b.parked = keep
}

// serve waits for a worker and has it serve one request; a request whose
// client has gone while it waited is dropped with ctx's error. A worker
// that the phase no longer has when the request would start is parked,
// and the request waits for another.
func (b *backend) serve(ctx context.Context) error {
	b.inFlight.Add(1)
	defer b.inFlight.Add(-1)
	queued := time.Now()
	for {
		var wk *worker
		select {
		case wk = <-b.pool:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !b.works(wk, wk.startFor(queued)) {
			b.park(wk)
			continue
		}
		wk.serve(queued)
		if b.works(wk, wk.free) {
			b.pool <- wk
		} else {
			b.park(wk)
		}
		return nil
	}
}

// service is the backend as a tower.Service, always ready: the server has
// no limit of its own, and every request it is handed waits for a worker.
func (b *backend) service() tower.Service[int, struct{}] {
	return tower.ServiceFunc[int, struct{}](func(ctx context.Context, _ int) (struct{}, error) {
		return struct{}{}, b.serve(ctx)
	})
}

// startFor is when wk starts a request that began waiting for it at
// queued: then, or when wk became free, whichever is later.
func (wk *worker) startFor(queued time.Time) time.Time {
	if wk.free.After(queued) {
		return wk.free
	}
	return queued
}

// serve takes serviceTime of the worker's time for a request that began
// waiting for it at queued. The work is a sleep, which needs no CPU, so
// the figures do not depend on the machine; and a request that waited
// for the worker starts when the worker became free, not when its sleep
// happened to wake, so a late timer does not make the worker slower than
// 100 requests per second.
func (wk *worker) serve(queued time.Time) {
	wk.free = wk.startFor(queued).Add(serviceTime)
	time.Sleep(time.Until(wk.free))
}
