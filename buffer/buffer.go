package buffer

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/lifetime"
	"github.com/towergo/tower/internal/logs"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/internal/sema"
	"github.com/towergo/tower/internal/waitq"
	"github.com/towergo/tower/metrics"
)

// Buffer is middleware that queues requests in front of a service and asks
// that service for readiness on behalf of one request at a time, in the
// order they queued; so a Buffer in front of a shared ConcurrencyLimit
// takes one place in its line, however many requests it holds.
//
// Ready reserves one of bound slots, waiting while all are taken; it does
// not ask the inner service. Call queues the request; in its turn the
// request gives its slot back, waits on the caller's goroutine until the
// inner service is ready, hands the turn on, and makes the call, so two
// requests readied at once may reach the inner service in either order.
// When nobody holds or waits for the turn, Call first asks the inner
// service with [tower.ReadyNow] (a context with no values), and queues
// only if it is not ready.
//
// The ctx given to Call bounds the whole wait and is the one the inner
// Call gets; the inner Ready waits under a context with ctx's values and
// deadline that also ends on Close. A caller that gives up leaves the
// queue at once, and its request never reaches the inner service; a
// permit that service gave it is released.
//
// A request that queues is reported to its context's [metrics.Tracer], if
// any, as a [metrics.QueueWait] from when it queued to when it got the
// inner permit or left. A request allocates nothing but the context its
// inner Ready may wait under. A Buffer is safe for concurrent use. Its
// zero value is not usable; call [New].
type Buffer[Req, Res any] struct {
	inner tower.Service[Req, Res]
	slots *sema.Sema   // one unit per queue slot
	sink  metrics.Sink // nil: no metrics
	log   *slog.Logger // nil: no logging
	pool  sync.Pool    // of *permit

	// turn is held by the request being readied: turnHeld, plus
	// turnWaiter for each request queued for it. Zero means nobody holds
	// or waits, and a call may skip the queue.
	turn atomic.Int64

	mu      sync.Mutex
	line    waitq.Queue   // of the requests waiting for the turn
	waiting bool          // the turn's holder waits in the inner service's Ready
	cancel  func()        // ends that wait's context, if the caller's can end
	left    chan struct{} // closed when that wait ends, if Shutdown waits for it
	err     error         // once set (failure or Close), nothing more is served
	isShut  atomic.Bool   // err is set; read without the lock
	stopped chan struct{} // closed when err is set
	stopCtx holdContext   // Background, ended by Close: see hold

	layer *lifetime.Set[Buffer[Req, Res]] // the Layer's, if a Layer made it
}

// New returns inner behind a Buffer of bound slots, with opts; a large
// bound costs nothing unused. It panics if inner is nil (a typed nil too),
// if bound is below 1 or above 1<<32-1, or if an option is nil.
func New[Req, Res any](inner tower.Service[Req, Res], bound int, opts ...Option) *Buffer[Req, Res] {
	option.PanicIf(isnil.Is(inner), "buffer.New: nil inner service")
	validateBound("buffer.New", bound)
	o := newOptions("buffer.New", opts)
	b := &Buffer[Req, Res]{
		inner:   inner,
		slots:   sema.New(bound),
		sink:    o.sink,
		log:     o.logger,
		stopped: make(chan struct{}),
	}
	b.stopCtx = holdContext{Context: context.Background(), stopped: b.stopped}
	return b
}

func validateBound(fn string, bound int) {
	option.PanicIf(bound < 1 || bound > sema.MaxUnits, "%s: bound must be between 1 and %d, got %d", fn, sema.MaxUnits, bound)
}

// Ready reserves a slot in the queue, waiting while all are taken. It
// returns ErrClosed after Close, or the *ServiceError after the inner
// service failed.
func (b *Buffer[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	if err := b.slots.AcquireWatched(ctx, b.sink); err != nil {
		return tower.Permit[Req, Res]{}, err
	}
	p, _ := b.pool.Get().(*permit[Req, Res])
	if p == nil {
		p = &permit[Req, Res]{b: b, w: *waitq.New()}
	}
	return tower.NewPermit(p, p.Token()), nil
}

// Close stops the Buffer. From then on Ready and Call fail with ErrClosed
// (or the *ServiceError, if the inner service failed first), even on a
// permit reserved before, and so do queued requests and callers waiting in
// Ready; a caller that has the inner permit goes on with its call. Close
// ends the context of the inner Ready that the request whose turn it is
// waits in, and waits until that returns. Close is idempotent and always
// returns nil.
func (b *Buffer[Req, Res]) Close() error {
	b.Shutdown(context.Background())
	return nil
}

// Shutdown is Close whose wait ctx bounds: it returns nil once no request
// waits in the inner service's Ready, or ctx.Err() if ctx ends first. It
// may be called any number of times, from any goroutine.
func (b *Buffer[Req, Res]) Shutdown(ctx context.Context) error {
	b.shut(ErrClosed)
	if err := b.waitLeft(ctx); err != nil {
		return err
	}
	if b.layer != nil {
		b.layer.Remove(b) // nothing left for the Layer to close
	}
	return nil
}

// waitLeft waits until no request waits in the inner service's Ready, or
// until ctx ends; the first if both have happened.
func (b *Buffer[Req, Res]) waitLeft(ctx context.Context) error {
	b.mu.Lock()
	if !b.waiting {
		b.mu.Unlock()
		return nil
	}
	if b.left == nil {
		b.left = make(chan struct{})
	}
	left := b.left
	b.mu.Unlock()
	select {
	case <-left:
		return nil
	default:
	}
	select {
	case <-left:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// permit is the record behind a Buffer's permit: it stands for one slot,
// and w waits in b.line for the turn.
type permit[Req, Res any] struct {
	tower.Ticket
	b *Buffer[Req, Res]
	w waitq.Waiter
}

func (p *permit[Req, Res]) CallReserved(ctx context.Context, token uint64, req Req) (Res, error) {
	p.MustRedeem(token)
	b := p.b
	inner, err := b.ready(ctx, p)
	// Back to the pool only now: p is out of the line and holds no turn.
	b.pool.Put(p)
	if err != nil {
		var zero Res
		return zero, err
	}
	return inner.Call(ctx, req)
}

func (p *permit[Req, Res]) ReleaseReserved(token uint64) {
	if !p.Redeem(token) {
		return
	}
	b := p.b
	b.pool.Put(p)
	b.slots.Release()
}

// shut stops the Buffer with err, unless an earlier error stands, and
// returns the error that stands.
func (b *Buffer[Req, Res]) shut(err error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return b.err
	}
	b.err = err
	b.isShut.Store(true)
	close(b.stopped)
	b.slots.Close(err)
	b.closeLine()
	if b.cancel != nil {
		b.cancel()
	}
	return err
}

// fail stops the Buffer with the inner service's failure, unless it stopped
// before, and returns the error that stands. It logs the failure once the
// Buffer has stopped, so that a panic in the logger leaves nothing held.
func (b *Buffer[Req, Res]) fail(cause error) error {
	se := &ServiceError{cause: cause}
	err := b.shut(se)
	if err == error(se) {
		logs.Failure(b.log, slog.LevelError, "buffer: the inner service failed; the Buffer fails every request from now on", cause)
	}
	return err
}

func (b *Buffer[Req, Res]) shutErr() error {
	if !b.isShut.Load() {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}
