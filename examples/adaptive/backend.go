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

// A phase is a stretch of a run during which the server has a fixed
// number of workers, each serving a request in a fixed time.
type phase struct {
	length  time.Duration
	workers int
	service time.Duration // a request's work on a worker
}

// phases is the server's capacity over the comparison's run: 400, 200,
// then 600 requests per second.
var phases = []phase{
	{10 * time.Second, 4, serviceTime},
	{10 * time.Second, 2, serviceTime},
	{10 * time.Second, 6, serviceTime},
}

// capacity is how many requests per second n workers serve.
func capacity(n int) int { return n * int(time.Second/serviceTime) }

// runLength is the length of the comparison's run.
func runLength() time.Duration { return span(phases) }

// span is the sum of the lengths of ps.
func span(ps []phase) time.Duration {
	var d time.Duration
	for _, p := range ps {
		d += p.length
	}
	return d
}

// maxWorkers is the most workers any phase of ps has.
func maxWorkers(ps []phase) int {
	n := 0
	for _, p := range ps {
		n = max(n, p.workers)
	}
	return n
}

// backend is a server with real capacity that changes over time: a pool of
// workers, each serving one request at a time in the service time of the
// phase the request starts in. A request waits for a free worker, first
// come first served, as long as its client is there; a request a worker
// has begun is served to its end, even if its client has gone by then.
// Worker i works while the phase has more than i workers: at a phase's
// start the pool gains workers, or loses them as they finish what they
// are doing. Which workers work is decided by the virtual instants a
// request starts and ends at, never by which goroutine runs first, so the
// run is the same every time on synctest's clock.
type backend struct {
	start    time.Time
	phases   []phase
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

// newBackend returns a backend whose capacity follows ps from start on,
// the last phase's lasting beyond its end: a timer at each phase's start
// brings back the workers it has.
func newBackend(start time.Time, ps []phase) *backend {
	b := &backend{start: start, phases: ps, pool: make(chan *worker, maxWorkers(ps))}
	for i := range maxWorkers(ps) {
		wk := &worker{index: i, free: start}
		if i < ps[0].workers {
			b.pool <- wk
		} else {
			b.parked = append(b.parked, wk)
		}
	}
	var at time.Time = start
	for _, ph := range ps[:len(ps)-1] {
		at = at.Add(ph.length)
		begin := at
		time.AfterFunc(time.Until(begin), func() { b.unpark(begin) })
	}
	return b
}

// at returns the phase in force at t.
func (b *backend) at(t time.Time) phase {
	var end time.Time = b.start
	for _, ph := range b.phases {
		end = end.Add(ph.length)
		if t.Before(end) {
			return ph
		}
	}
	return b.phases[len(b.phases)-1]
}

// works reports whether wk is one of the workers of the phase at t.
func (b *backend) works(wk *worker, t time.Time) bool {
	return wk.index < b.at(t).workers
}

// park takes wk out of the pool.
func (b *backend) park(wk *worker) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.parked = append(b.parked, wk)
}

// unpark returns to the pool the parked workers that the phase beginning
// at at has, free from then on: worker i from i nanoseconds after at, so
// that requests that were waiting do not all end at one instant, where
// which goroutine ran first would decide the order their limiter hears
// of them.
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
			wk.free = at.Add(time.Duration(wk.index))
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
		begin := wk.startFor(queued)
		if !b.works(wk, begin) {
			b.park(wk)
			continue
		}
		wk.serve(begin, b.at(begin).service)
		if b.works(wk, wk.free) {
			b.pool <- wk
		} else {
			b.park(wk)
		}
		return nil
	}
}

// requests returns the requests in the server: waiting for a worker or
// served.
func (b *backend) requests() int { return int(b.inFlight.Load()) }

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

// serve takes d of the worker's time for a request that starts at begin
// (see startFor). The work is a sleep, which needs no CPU, so the figures
// do not depend on the machine; and a request that waited for the worker
// starts when the worker became free, not when its sleep happened to
// wake, so a late timer does not make the worker slower than its service
// time allows.
func (wk *worker) serve(begin time.Time, d time.Duration) {
	wk.free = begin.Add(d)
	time.Sleep(time.Until(wk.free))
}
