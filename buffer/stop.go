package buffer

import (
	"context"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/safe"
)

// fail records the inner service's failure, fails everyone waiting with
// it, stops the worker (it may have been found on a call that skipped the
// queue), and returns the error that stands: that failure's *ServiceError,
// or the error the Buffer had stopped with before.
func (c *core[Req, Res]) fail(cause error) error {
	err := c.shut(&ServiceError{cause: cause})
	c.stopWork()
	return err
}

// failOnWorker fails the Buffer with perr, a panic on its worker. If the
// Buffer had stopped before, no caller is left to hear of the panic, and it
// is logged.
func (c *core[Req, Res]) failOnWorker(perr *tower.PanicError) {
	if se, ok := c.fail(perr).(*ServiceError); !ok || se.cause != error(perr) {
		safe.Orphan(perr)
	}
}

// requestStop stops the buffer with ErrClosed, unless it stopped before,
// and tells the worker to exit, without waiting for it. It is idempotent.
// It is also the cleanup of a Buffer the garbage collector found
// unreachable, which must not block.
func (c *core[Req, Res]) requestStop() {
	c.shut(ErrClosed)
	c.stopWork()
}

// shutdown stops the buffer and waits until the worker has exited, or
// until ctx ends: then it returns ctx.Err(), and the worker exits on its
// own once the inner service's Ready returns.
func (c *core[Req, Res]) shutdown(ctx context.Context) error {
	c.requestStop()
	return c.wait(ctx)
}

// wait waits until the worker has exited and returns nil, or returns
// ctx.Err() if ctx ends first. A worker that has exited is never reported
// as a ctx error, even if ctx is done.
func (c *core[Req, Res]) wait(ctx context.Context) error {
	select {
	case <-c.done:
		return nil
	default:
	}
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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
