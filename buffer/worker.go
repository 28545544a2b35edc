package buffer

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/safe"
	"github.com/towergo/tower/internal/sema"
	"github.com/towergo/tower/metrics"
)

// core is the part of a Buffer the worker uses. It must not point back to
// the Buffer, or the Buffer could never become unreachable.
type core[Req, Res any] struct {
	inner tower.Service[Req, Res]
	slots *sema.Sema                // one unit per queue slot
	q     *queue[message[Req, Res]] // never holds more than slots allow
	// pending counts the requests queued or in the worker's hand: a call
	// may skip the queue only when it is zero.
	pending atomic.Int64

	sink metrics.Sink // nil: no metrics
	// queued counts what sink has been told is Queued, while the worker
	// runs; the worker's exit swaps it for workerGone (see queuedIn).
	queued atomic.Int64

	mu       sync.Mutex
	err      error         // once set (failure or Close), nothing more is served
	isShut   atomic.Bool   // err is set; read without touching a channel
	stopped  chan struct{} // closed when err is set: waiting callers leave
	stop     context.Context
	stopWork context.CancelFunc
	done     chan struct{} // closed when the worker has exited
}

func newCore[Req, Res any](inner tower.Service[Req, Res], bound int, sink metrics.Sink) *core[Req, Res] {
	stop, cancel := context.WithCancel(context.Background())
	return &core[Req, Res]{
		inner:    inner,
		sink:     sink,
		slots:    sema.New(bound),
		q:        newQueue[message[Req, Res]](),
		stopped:  make(chan struct{}),
		stop:     stop,
		stopWork: cancel,
		done:     make(chan struct{}),
	}
}

// What a worker may be doing when its goroutine panics, or ends with
// runtime.Goexit: the Where of the PanicError the Buffer then fails with.
const (
	onWorker        = "a Buffer's worker"
	readyOnWorker   = "the inner service's Ready, on a Buffer's worker"
	releaseOnWorker = "an inner permit's Release, on a Buffer's worker"
	sinkOnWorker    = "the metrics sink, on a Buffer's worker"
)

// worker is the state of a Buffer's worker goroutine.
type worker[Req, Res any] struct {
	c        *core[Req, Res]
	doing    string // one of the constants above
	returned bool   // the loop returned: the worker did not panic
}

// run is the worker goroutine. Its code runs user code, the inner
// service's Ready above all; a panic or a runtime.Goexit there ends the
// loop, and exit turns it into the Buffer's failure, so that the process
// lives on and no caller waits for a worker that is gone.
func (c *core[Req, Res]) run() {
	w := &worker[Req, Res]{c: c, doing: onWorker}
	defer close(c.done)
	defer w.exit()
	w.loop()
	w.returned = true
}

// loop takes messages in order and, for each one still wanted, waits for
// the inner service's readiness and hands the permit over, until the
// Buffer stops.
func (w *worker[Req, Res]) loop() {
	c := w.c
	for !c.isShut.Load() {
		m, ok := c.q.take()
		if !ok {
			select {
			case <-c.q.wake:
				continue
			case <-c.stop.Done():
				return
			}
		}
		// m is in hand now: its queue slot can take another request.
		c.slots.Release()
		if gone(m.ctx) == nil && !w.serve(m) {
			return
		}
		// Only now may a call skip the queue: the answer is handed over,
		// or the request skipped.
		w.finished()
	}
}

// serve waits for the inner service on behalf of m's caller and hands the
// caller the permit. It returns false if the Buffer stopped or the inner
// service failed: the caller hears of either from c.stopped.
func (w *worker[Req, Res]) serve(m message[Req, Res]) bool {
	c := w.c
	w.doing = readyOnWorker
	p, err := c.readyFor(m.ctx)
	w.doing = onWorker
	switch {
	case err == nil:
		w.answer(m, reply[Req, Res]{permit: p})
		return true
	case c.stop.Err() == nil:
		c.fail(err)
	}
	return false
}

// exit runs as the worker goroutine ends. If the loop did not return, user
// code panicked or called runtime.Goexit: the Buffer fails for good with
// that PanicError. Then the queue drops what it holds, and the requests
// still queued or in hand leave Queued.
func (w *worker[Req, Res]) exit() {
	c := w.c
	if !w.returned {
		c.failOnWorker(safe.Recovered(w.doing, recover()))
	}
	c.q.close()
	if c.sink != nil {
		if perr := safe.Call(sinkOnWorker, c.queuedOut); perr != nil {
			c.failOnWorker(perr)
		}
	}
}

// finished marks the request in the worker's hand as done with.
func (w *worker[Req, Res]) finished() {
	c := w.c
	c.pending.Add(-1)
	if c.sink != nil {
		c.queued.Add(-1)
		w.doing = sinkOnWorker
		c.sink.Add(metrics.Queued, -1)
		w.doing = onWorker
	}
}

// answer hands r to m's caller, or releases r's permit if the caller has
// left. The caller of this round is gone once its ctx ends or the buffer
// shuts; a later holder of the same record refuses an answer for an older
// round.
func (w *worker[Req, Res]) answer(m message[Req, Res], r reply[Req, Res]) {
	r.round = m.round
	select {
	case m.p.reply <- r:
		return
	case <-m.ctx.Done():
	case <-w.c.stopped:
	}
	w.doing = releaseOnWorker
	r.permit.Release()
	w.doing = onWorker
}

// workerGone is what queued holds once the worker has exited: far below any
// count, so that a request queued afterwards sees it and counts itself
// out, since no worker will.
const workerGone = math.MinInt64 / 2

// queuedIn reports a request about to be queued, unless the worker has
// exited already: then it will never take the request, and the request is
// not counted. Every +1 is matched by one -1: the worker's when it is done
// with the request, or the one its exit reports for every request it
// leaves behind. Counting on one atomic, which the exit swaps, leaves no
// gap between the two.
func (c *core[Req, Res]) queuedIn() {
	for n := c.queued.Load(); n >= 0; n = c.queued.Load() {
		if c.queued.CompareAndSwap(n, n+1) {
			c.sink.Add(metrics.Queued, 1)
			return
		}
	}
}

// queuedOut runs as the worker exits: the requests still queued, and the
// one in its hand, leave Queued.
func (c *core[Req, Res]) queuedOut() {
	if n := c.queued.Swap(workerGone); n > 0 {
		c.sink.Add(metrics.Queued, -n)
	}
}

// acquire reserves a slot, waiting in line for one if none is free.
func (c *core[Req, Res]) acquire(ctx context.Context) error {
	return c.slots.AcquireWatched(ctx, c.sink)
}

// readyFor waits for the inner service on behalf of a caller with ctx,
// until it is ready or the buffer closes. Most of the time the inner
// service is ready now, and asking costs nothing. Otherwise the worker
// waits under a context that carries the caller's values and ends when the
// buffer closes, but not when the caller gives up, as tower's worker does:
// a context that ended on either would cost a registration with each, for
// every wait of the one goroutine every queued request goes through. The
// request of a caller that gave up meanwhile is skipped when the inner
// service is ready, and the reservation made for it released.
func (c *core[Req, Res]) readyFor(ctx context.Context) (tower.Permit[Req, Res], error) {
	if p, ok, err := tower.ReadyNow(c.inner); ok || err != nil {
		return p, err
	}
	return c.inner.Ready(&workerContext{Context: c.stop, values: ctx})
}

// workerContext is the buffer's stop context with the values of a caller's.
type workerContext struct {
	context.Context // the buffer's stop: ends on Close
	values          context.Context
}

func (w *workerContext) Value(key any) any { return w.values.Value(key) }

// gone returns the error of a caller that has given up: ctx's error, or
// context.DeadlineExceeded once ctx's deadline has passed, which the clock
// tells a moment before the context's own timer does. A request whose caller
// is gone must not reach the inner service.
func gone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}
