package buffer

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/sema"
	"github.com/towergo/tower/metrics"
)

// core is the part of a Buffer the worker uses. It must not point back to
// the Buffer, or the Buffer could never become unreachable.
type core[Req, Res any] struct {
	inner tower.Service[Req, Res]
	slots *sema.Sema             // one unit per queue slot
	queue chan message[Req, Res] // never fuller than slots allow
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
		queue:    make(chan message[Req, Res], bound),
		stopped:  make(chan struct{}),
		stop:     stop,
		stopWork: cancel,
		done:     make(chan struct{}),
	}
}

// run is the worker: it takes messages in order and, for each one still
// wanted, waits for the inner service's readiness and hands the permit over.
func (c *core[Req, Res]) run() {
	defer close(c.done)
	if c.sink != nil {
		defer c.queuedOut() // before done is closed: Close returns with Queued settled
	}
	for {
		var m message[Req, Res]
		select {
		case m = <-c.queue:
		case <-c.stop.Done():
			return
		}
		// m is in hand now: its queue slot can take another request.
		c.slots.Release()
		if gone(m.ctx) != nil {
			c.finished()
			continue
		}
		p, err := c.readyFor(m.ctx)
		switch {
		case err == nil:
			c.answer(m, reply[Req, Res]{permit: p})
		case c.stop.Err() != nil:
			return // the caller hears of the Close from c.stopped
		default:
			c.fail(err) // the caller hears of it from c.stopped
			return
		}
		// Only now may a call skip the queue: the answer is handed over.
		c.finished()
	}
}

// finished marks the request in the worker's hand as done with.
func (c *core[Req, Res]) finished() {
	c.pending.Add(-1)
	if c.sink != nil {
		c.queued.Add(-1)
		c.sink.Add(metrics.Queued, -1)
	}
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

// answer hands r to m's caller, or releases r's permit if the caller has
// left. The caller of this round is gone once its ctx ends or the buffer
// shuts; a later holder of the same record refuses an answer for an older
// round.
func (c *core[Req, Res]) answer(m message[Req, Res], r reply[Req, Res]) {
	r.round = m.round
	select {
	case m.p.reply <- r:
	case <-m.ctx.Done():
		r.permit.Release()
	case <-c.stopped:
		r.permit.Release()
	}
}

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

// fail records the inner service's failure, fails everyone waiting with
// it, stops the worker (it may have been found on a call that skipped the
// queue), and returns that error.
func (c *core[Req, Res]) fail(cause error) error {
	err := c.shut(&ServiceError{cause: cause})
	c.stopWork()
	return err
}

// close stops the worker and waits for it to exit. It is idempotent.
func (c *core[Req, Res]) close() {
	c.shut(ErrClosed)
	c.stopWork()
	<-c.done
}

// collected is the cleanup of a Buffer the garbage collector found
// unreachable: it stops the worker without waiting for it, as a cleanup
// must not block. For a Buffer that was closed, or whose inner service
// failed, both steps do nothing.
func (c *core[Req, Res]) collected() {
	c.shut(ErrClosed)
	c.stopWork()
}

// shut stops the buffer with err, unless an earlier error stands, and
// returns the error that stands. Callers waiting in Ready are woken by
// closing the slots; callers waiting in Call leave on c.stopped. What is
// still queued is never answered.
func (c *core[Req, Res]) shut(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	c.err = err
	c.isShut.Store(true)
	close(c.stopped)
	c.slots.Close(err)
	return err
}

// shutErr returns the error the buffer was stopped with, or nil.
func (c *core[Req, Res]) shutErr() error {
	if !c.isShut.Load() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
