package buffer

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/sema"
)

// core is the part of a Buffer the worker uses.
type core[Req, Res any] struct {
	inner tower.Service[Req, Res]
	slots *sema.Sema              // one unit per queue slot
	queue chan *message[Req, Res] // never fuller than slots allow

	mu  sync.Mutex
	err error // once set (failure or Close), nothing more is queued

	stop     context.Context // ended by close
	stopWork context.CancelFunc
	done     chan struct{} // closed when the worker has exited
}

func newCore[Req, Res any](inner tower.Service[Req, Res], bound int) *core[Req, Res] {
	stop, cancel := context.WithCancel(context.Background())
	return &core[Req, Res]{
		inner:    inner,
		slots:    sema.New(bound),
		queue:    make(chan *message[Req, Res], bound),
		stop:     stop,
		stopWork: cancel,
		done:     make(chan struct{}),
	}
}

// enqueue queues m, unless the buffer has failed or closed. m's slot is
// given back by the worker when it takes m out of the queue.
func (c *core[Req, Res]) enqueue(m *message[Req, Res]) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		c.slots.Release()
		return c.err
	}
	select {
	case c.queue <- m:
		return nil
	default:
		panic("buffer: queue full although a slot was reserved")
	}
}

// run is the worker: it takes messages in order and, for each one still
// wanted, waits for the inner service's readiness and hands the permit over.
func (c *core[Req, Res]) run() {
	defer close(c.done)
	for {
		var m *message[Req, Res]
		select {
		case m = <-c.queue:
		case <-c.stop.Done():
			return
		}
		// m is in hand now: its queue slot can take another request.
		c.slots.Release()
		if m.state.Load() == abandoned || gone(m.ctx) != nil {
			continue
		}
		p, err := c.readyFor(m)
		switch {
		case err == nil:
			m.answer(reply[Req, Res]{permit: p})
		case c.stop.Err() != nil:
			m.answer(reply[Req, Res]{err: ErrClosed})
			return
		case m.ctx.Err() != nil && isCancel(err):
			// The caller gave up while the worker waited on its behalf.
		default:
			m.answer(reply[Req, Res]{err: c.fail(err)})
			return
		}
	}
}

// readyFor waits for the inner service on behalf of m's caller: until it is
// ready, the caller gives up, or the buffer closes.
func (c *core[Req, Res]) readyFor(m *message[Req, Res]) (tower.Permit[Req, Res], error) {
	// Most of the time the inner service is ready now, and asking costs
	// nothing; only a real wait needs a context tied to both ends.
	if p, ok, err := tower.ReadyNow(c.inner); ok || err != nil {
		return p, err
	}
	ctx, cancel := context.WithCancel(m.ctx)
	defer cancel()
	defer context.AfterFunc(c.stop, cancel)()
	return c.inner.Ready(ctx)
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

func isCancel(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// fail records the inner service's failure and fails everyone waiting with
// it: callers in Ready are woken by closing the slots, queued messages are
// answered. It returns the error to give the message in hand.
func (c *core[Req, Res]) fail(cause error) error {
	err := &ServiceError{cause: cause}
	c.shut(err)
	return err
}

// close stops the worker, waits for it to exit, and fails what is queued.
// It is idempotent.
func (c *core[Req, Res]) close() {
	c.shut(ErrClosed)
	c.stopWork()
	<-c.done
}

// collected is the cleanup of a Buffer the garbage collector found
// unreachable: it stops the worker without waiting for it, as a cleanup
// must not block. A Buffer that was closed, or whose inner service failed,
// has nothing left to stop; its cleanup may run outside the synctest bubble
// that made it, where touching the queue would be fatal, so it does nothing.
func (c *core[Req, Res]) collected() {
	c.mu.Lock()
	stopped := c.err != nil
	c.mu.Unlock()
	if stopped {
		return
	}
	c.shut(ErrClosed)
	c.stopWork()
}

// shut stops new requests, with err unless an earlier error stands, and
// answers every queued message with that error.
func (c *core[Req, Res]) shut(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	err = c.err
	c.mu.Unlock()
	c.slots.Close(err)
	// Nothing is queued once c.err is set, so this drains the queue for good.
	for {
		select {
		case m := <-c.queue:
			m.answer(reply[Req, Res]{err: err})
		default:
			return
		}
	}
}
