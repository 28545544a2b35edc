package buffer

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/lifetime"
	"github.com/towergo/tower/internal/sema"
	"github.com/towergo/tower/metrics"
)

// Buffer is middleware that queues requests in front of a service, and
// asks that service for readiness on behalf of one request at a time, in
// the order they were queued. Ready reserves one of bound slots in the
// queue, waiting while all are taken; it does not ask the inner service.
// Call queues the request and waits for its turn: every request queued
// before it has been readied by the inner service, or skipped. Then it
// waits, on the caller's goroutine, until the inner service is ready, hands
// the turn to the next request, and makes the call. Requests are readied in
// the order they were queued; two that the inner service readies at once
// may still reach it in either order, since each caller's goroutine makes
// its own call.
//
// So the inner service sees one waiter for the whole queue: a Buffer in
// front of a shared ConcurrencyLimit takes one place in the limit's line,
// however many requests it holds. And a Buffer starts no goroutine: the
// request whose turn it is waits on its own caller's goroutine, which saves
// the hand-offs to and from a worker that tower's Buffer makes.
//
// When no request holds the turn or waits for it, a call does not queue:
// it gives its slot back and, unless its caller has given up, asks the
// inner service whether it is ready now. Only if it is not does the call
// take its place in the queue, behind any that queued meanwhile.
//
// The queue holds bound requests, plus the one whose turn it is: a slot is
// freed when a request's turn comes, as in tower 0.5, where a slot is
// freed when its worker takes a request in hand. A request whose caller
// gives up (its ctx ends, or its deadline passes, even at the instant the
// inner service becomes ready; or it had ended before Call) leaves the
// queue at once and never reaches the inner service; a reservation the
// inner service made for it is released.
//
// The ctx given to Call bounds the whole wait, in the queue and for the
// inner service, and is the ctx the inner service's Call gets, values and
// all. The inner service is first asked with [tower.ReadyNow], whose
// context carries no values; only if it is not ready then does the request
// wait, under a context that carries the caller's values and deadline and
// ends when the caller's does, or when the Buffer closes.
//
// If the inner service's Ready fails, the Buffer fails for good: the
// request whose turn it was, every queued request, every caller waiting in
// Ready and every later one get one *ServiceError wrapping that failure.
// After Close, every Ready and Call fails with ErrClosed, or with the
// *ServiceError if the inner service failed first.
//
// A panic in the inner service's Ready is that service failing its
// readiness: it happens on the goroutine of the caller whose turn it was,
// or of one that asked without queueing, and goes on up to that caller,
// after the Buffer has failed for good with a *ServiceError wrapping a
// [*tower.PanicError] (which errors.As finds), and the caller's slot and
// turn have been given back. A runtime.Goexit there does the same, and the
// goroutine goes on exiting. A panic in the inner service's Call happens on
// the caller's goroutine and goes on up to the caller; it breaks nothing.
//
// A request that queues, and whose context carries a [metrics.Tracer]
// (see [metrics.WithTracer]), has its time in the queue reported to it,
// as a wait of kind [metrics.QueueWait]: from when it queued to when it
// got the inner permit, or left the queue without it. A panic in the
// Tracer goes on up to the caller, with the inner permit released. A
// request that skips the queue does not look for a Tracer.
//
// A request allocates nothing on its way through a Buffer: its permit's
// record, which carries the channel on which its turn is handed over,
// comes from a pool and goes back to it. A request that must wait for the
// inner service under a context that can end allocates the context that
// Close can end too. The queue is a list through those records, so an idle
// Buffer's memory does not grow with its bound.
//
// A Buffer is safe for concurrent use. Its zero value is not usable; call
// [New]. Req and Res are the request and response types.
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
	line    line[Req, Res] // the requests waiting for the turn, oldest first
	waiting bool           // the turn's holder waits in the inner service's Ready
	cancel  func()         // ends that wait's context, if the caller's can end
	left    chan struct{}  // closed when that wait ends, if Shutdown waits for it
	err     error          // once set (failure or Close), nothing more is served
	isShut  atomic.Bool    // err is set; read without the lock
	stopped chan struct{}  // closed when err is set
	stopCtx holdContext    // Background, ended by Close: see hold

	layer *lifetime.Set[Buffer[Req, Res]] // the Layer's, if a Layer made it
}

// New returns inner behind a Buffer of bound slots, with opts. It panics if
// inner is nil (or a typed nil, such as a nil pointer), if bound is below 1
// or above 1<<32-1, or if an option is nil. The queue takes memory only as
// requests are queued, so a large bound costs nothing until it is used.
func New[Req, Res any](inner tower.Service[Req, Res], bound int, opts ...Option) *Buffer[Req, Res] {
	if isnil.Is(inner) {
		panic("buffer.New: nil inner service")
	}
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

// validateBound panics unless bound is a number of slots the function
// named fn accepts.
func validateBound(fn string, bound int) {
	if bound < 1 || bound > sema.MaxUnits {
		panic(fmt.Sprintf("%s: bound must be between 1 and %d, got %d", fn, sema.MaxUnits, bound))
	}
}

// Ready reserves a slot in the queue, waiting while all are taken. It
// returns ErrClosed after Close, and the *ServiceError after the inner
// service failed.
func (b *Buffer[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	if err := b.acquireSlot(ctx); err != nil {
		return tower.Permit[Req, Res]{}, err
	}
	p, _ := b.pool.Get().(*permit[Req, Res])
	if p == nil {
		p = &permit[Req, Res]{b: b, turn: make(chan struct{}, 1)}
	}
	return tower.NewPermit(p, p.Token()), nil
}

// Close stops the Buffer. From then on Ready and Call fail with ErrClosed,
// even on a permit reserved before Close: so do the requests still queued,
// and the callers waiting in Ready are woken with it. If the inner service
// failed first, they get its *ServiceError instead. A caller that already
// has the inner permit goes on with its call.
//
// The request whose turn it is may be waiting in the inner service's
// Ready, whose context Close ends; Close waits until that Ready returns,
// however long an inner service that ignores its context takes.
// [Buffer.Shutdown] bounds that wait. Close is idempotent and always
// returns nil.
func (b *Buffer[Req, Res]) Close() error {
	b.Shutdown(context.Background())
	return nil
}

// Shutdown stops the Buffer as Close does, and then waits, as net/http's
// Server.Shutdown waits for its connections, until no request waits in
// the inner service's Ready: it returns nil then, or ctx.Err() if ctx ends
// first. Shutdown, like Close, may be called any number of times, and with
// Close, from any goroutine.
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
// until ctx ends.
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
// and carries the channel on which its request is handed the turn.
type permit[Req, Res any] struct {
	tower.Ticket
	b *Buffer[Req, Res]

	turn       chan struct{}     // buffered: the turn is handed over without waiting
	granted    bool              // something was sent on turn; set under b.mu
	handed     error             // what: nil for the turn, or the Buffer's error
	prev, next *permit[Req, Res] // in b.line
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
// returns the error that stands. Callers waiting in Ready are woken by
// closing the slots, and queued callers are handed err; a request waiting
// in the inner service's Ready has its context ended.
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
// before, and returns the error that stands. The failure that stops the
// Buffer is logged, once the Buffer has stopped: a panic in the logger
// goes on up to the caller, with nothing left to give back.
func (b *Buffer[Req, Res]) fail(cause error) error {
	se := &ServiceError{cause: cause}
	err := b.shut(se)
	if err == error(se) {
		b.logFailed(cause)
	}
	return err
}

// shutErr returns the error the Buffer was stopped with, or nil.
func (b *Buffer[Req, Res]) shutErr() error {
	if !b.isShut.Load() {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}
