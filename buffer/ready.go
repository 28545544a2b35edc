package buffer

import (
	"context"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/internal/mono"
	"github.com/towergo/tower/metrics"
)

// ready gets the inner service's permit for the request p stands for: at
// once, if no request holds the turn or waits for it and the inner service
// is ready now; or else in its turn.
func (b *Buffer[Req, Res]) ready(ctx context.Context, p *permit[Req, Res]) (tower.Permit[Req, Res], error) {
	if err := b.shutErr(); err != nil {
		b.slots.Release()
		return tower.Permit[Req, Res]{}, err
	}
	if b.turn.Load() == 0 {
		// Nobody ahead: a call that queues meanwhile arrived after this one.
		if inner, done, err := b.skip(ctx); done {
			return inner, err
		}
	}
	t := metrics.TracerFrom(ctx)
	if b.sink == nil && t == nil {
		return b.inTurn(ctx, p)
	}
	return b.watchedTurn(ctx, p, t)
}

// watchedTurn is inTurn for a request whose queueing is watched: by the
// sink, which counts it in and out, or by t, the request's Tracer, which
// hears how long it queued. Either may be nil. A panic in either goes on
// up to the caller, who then holds nothing: a request that has not queued
// gives its slot back, and one that got the inner permit releases it.
func (b *Buffer[Req, Res]) watchedTurn(ctx context.Context, p *permit[Req, Res], t metrics.Tracer) (tower.Permit[Req, Res], error) {
	var start time.Time
	if t != nil {
		start = time.Now()
	}
	if b.sink != nil {
		guard.Undo(func() { b.sink.Add(metrics.Queued, 1) }, func() { b.slots.Release() })
	}
	inner, err := b.inTurn(ctx, p)
	guard.Undo(func() {
		if b.sink != nil {
			b.sink.Add(metrics.Queued, -1)
		}
		if t != nil {
			t.Waited(ctx, metrics.Wait{Kind: metrics.QueueWait, Start: start, Duration: time.Since(start), Err: err})
		}
	}, func() {
		if err == nil {
			inner.Release()
		}
	})
	return inner, err
}

// skip does what a request does in its turn, without queueing. If that
// settles the request (done), the slot is given back; if not, the caller
// queues, holding its slot.
func (b *Buffer[Req, Res]) skip(ctx context.Context) (inner tower.Permit[Req, Res], done bool, err error) {
	if err := mono.Err(ctx); err != nil {
		b.slots.Release()
		return inner, true, err
	}
	inner, ok, err := b.readyNow(true)
	if ok {
		b.slots.Release()
		return inner, true, nil
	}
	if err != nil {
		b.slots.Release()
		return inner, true, b.fail(err)
	}
	return inner, false, nil
}

// inTurn waits for p's turn, gives its slot back, and waits until the
// inner service is ready, unless the caller gives up or the Buffer stops
// first. Then it hands the turn on.
func (b *Buffer[Req, Res]) inTurn(ctx context.Context, p *permit[Req, Res]) (tower.Permit[Req, Res], error) {
	err := b.takeTurn(ctx, p)
	b.slots.Release()
	if err != nil {
		return tower.Permit[Req, Res]{}, err
	}
	defer b.passTurn()
	if err := mono.Err(ctx); err != nil {
		return tower.Permit[Req, Res]{}, err
	}
	inner, ok, err := b.readyNow(false)
	if !ok && err == nil {
		inner, err = b.waitReady(ctx)
		if err == nil && b.isShut.Load() {
			// Close ended the wait, and the inner service did not heed it.
			inner.Release()
			return tower.Permit[Req, Res]{}, b.shutErr()
		}
	}
	if err == nil {
		if err := mono.Err(ctx); err != nil {
			// The permit came at the instant the caller's deadline passed,
			// before its context noticed: the caller has given up.
			inner.Release()
			return tower.Permit[Req, Res]{}, err
		}
		return inner, nil
	}
	if ctx.Err() != nil {
		// The caller gave up: the inner service has not failed.
		return inner, err
	}
	return inner, b.fail(err)
}

const readyNowOnCaller = "the inner service's Ready, on a Buffer's caller's goroutine"

// readyNow asks the inner service if it is ready now, for a caller that
// still holds its slot (slot) or has given it back. A panic or
// runtime.Goexit there fails the Buffer for good (see panicked).
func (b *Buffer[Req, Res]) readyNow(slot bool) (p tower.Permit[Req, Res], ok bool, err error) {
	returned := false
	defer func() {
		if !returned {
			b.panicked(recover(), slot)
		}
	}()
	p, ok, err = tower.ReadyNow(b.inner)
	returned = true
	return p, ok, err
}

// waitReady waits until the inner service is ready, under a context that
// ends with the caller's or on Close.
func (b *Buffer[Req, Res]) waitReady(ctx context.Context) (inner tower.Permit[Req, Res], err error) {
	hctx, ok := b.hold(ctx)
	if !ok {
		return inner, b.shutErr()
	}
	returned := false
	defer func() {
		b.unhold()
		if !returned {
			b.panicked(recover(), false)
		}
	}()
	inner, err = b.inner.Ready(hctx)
	returned = true
	return inner, err
}

// panicked handles a panic with v (nil for runtime.Goexit) in the inner
// service's Ready, on the goroutine of a caller that holds a slot (slot),
// or not. It must be called from the deferred function that recovered v.
func (b *Buffer[Req, Res]) panicked(v any, slot bool) {
	if slot {
		defer b.slots.Release() // even if the logger panics too
	}
	b.fail(guard.Recovered(readyNowOnCaller, v))
	if v != nil {
		panic(v)
	}
}

// hold returns the context the inner service's Ready waits under for the
// request whose turn it is, and records the wait for Close to end and
// Shutdown to wait for. It reports false if the Buffer has stopped.
func (b *Buffer[Req, Res]) hold(ctx context.Context) (context.Context, bool) {
	var (
		hctx   context.Context
		cancel context.CancelFunc
	)
	if ctx == context.Background() {
		// Nothing to carry over, nothing that ends but Close: a context
		// of the Buffer's own, which the inner service may keep.
		hctx = &b.stopCtx
	} else if ctx.Done() == nil {
		hctx = &holdContext{Context: ctx, stopped: b.stopped}
	} else {
		hctx, cancel = context.WithCancel(ctx)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		if cancel != nil {
			cancel()
		}
		return nil, false
	}
	b.waiting, b.cancel = true, cancel
	return hctx, true
}

func (b *Buffer[Req, Res]) unhold() {
	b.mu.Lock()
	cancel := b.cancel
	b.waiting, b.cancel = false, nil
	if b.left != nil {
		close(b.left)
		b.left = nil
	}
	b.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// A holdContext is a caller's context that cannot end, made to end when
// the Buffer stops.
type holdContext struct {
	context.Context // the caller's; its Done is nil
	stopped         <-chan struct{}
}

func (h *holdContext) Done() <-chan struct{} { return h.stopped }

func (h *holdContext) Err() error {
	select {
	case <-h.stopped:
		return context.Canceled
	default:
		return nil
	}
}
