package buffer

import (
	"context"
	"fmt"
	"sync"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/lifetime"
	"github.com/towergo/tower/internal/sema"
)

// Buffer is middleware that queues requests for one worker goroutine. Ready
// reserves one of bound slots in the queue, waiting while all are taken; it
// does not ask the inner service. Call queues the request and waits: the
// worker takes requests in order and, for each, waits until the inner
// service is ready, then hands the inner permit back to the caller, whose
// goroutine makes the call. So the worker only ever waits for readiness,
// never for responses. Requests are readied in the order they were queued;
// two that the inner service readies at once may still reach it in either
// order, since each caller's goroutine makes its own call.
//
// When nothing is queued or in the worker's hand and the inner service is
// ready now, a call skips the queue and asks the inner service itself, as
// the worker would have at once; this keeps the order, and saves two
// goroutine switches on the path that does not wait.
//
// The queue holds bound requests, plus one in the worker's hand while it
// waits for the inner service: a slot is freed when the worker takes a
// request in hand, as in tower 0.5. A request whose caller gives up while it
// is queued or in hand (its ctx ends, or its deadline passes, even at the
// instant the inner service becomes ready) is skipped and never reaches the
// inner service; a reservation the inner service made for it is released.
//
// The ctx given to Call bounds the whole wait in the queue and for the inner
// service, and is the ctx the inner service's Call gets, values and all.
// The inner service is first asked with [tower.ReadyNow], whose context
// carries no values; only if it is not ready then does the worker wait,
// under a context that carries the caller's values and ends when the
// Buffer closes. As in tower, a caller that gives up does not end that
// wait: when the inner service is ready, its request is skipped and the
// reservation released.
//
// If the inner service's Ready fails, the Buffer fails for good: the request
// in hand, every queued request, every caller waiting in Ready and every
// later one get one *ServiceError wrapping that failure, and the worker
// exits. Close stops the worker; after it, every Ready and Call fails with
// ErrClosed, or with the *ServiceError if the inner service failed first.
//
// A Buffer must be closed, or be unreachable, for its worker to stop: a
// Buffer that becomes unreachable, with no permit outstanding and no call
// in flight, is closed by the garbage collector.
//
// Memory and allocation: the queue allocates 32 bytes per slot up front.
// A request allocates nothing: its permit's record, which carries the
// channel the worker answers on, comes from a pool and goes back to it, and
// a round number in each answer keeps an answer owed to an earlier holder
// from reaching a later one. While queued, a request holds about 250 bytes
// of heap (that record and channel, and the runtime's record of its parked
// select; measured on linux/amd64 by TestQueuedRequestMemory), besides its
// caller's goroutine, parked in Call with a stack of 2 KiB or more.
//
// A Buffer is safe for concurrent use. Its zero value is not usable; call
// [New]. Req and Res are the request and response types.
type Buffer[Req, Res any] struct {
	c    *core[Req, Res] // what the worker shares; it must not point back here
	pool sync.Pool       // of *permit, which point here and keep the Buffer alive
}

// New returns inner behind a Buffer of bound slots, with opts, and starts
// its worker. It panics if inner is nil, if bound is below 1 or above
// 1<<32-1, or if an option is nil.
func New[Req, Res any](inner tower.Service[Req, Res], bound int, opts ...Option) *Buffer[Req, Res] {
	if inner == nil {
		panic("buffer.New: nil inner service")
	}
	validateBound(bound)
	o := newOptions("buffer.New", opts)
	c := newCore(inner, bound, o.sink)
	b := &Buffer[Req, Res]{c: c}
	lifetime.OnUnreachable(b, (*core[Req, Res]).collected, c)
	go c.run()
	return b
}

func validateBound(bound int) {
	if bound < 1 || bound > sema.MaxUnits {
		panic(fmt.Sprintf("buffer: bound must be between 1 and %d, got %d", sema.MaxUnits, bound))
	}
}

// Ready reserves a slot in the queue, waiting while all are taken. It
// returns ErrClosed after Close, and the *ServiceError after the inner
// service failed.
func (b *Buffer[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	if err := b.c.acquire(ctx); err != nil {
		return tower.Permit[Req, Res]{}, err
	}
	p, _ := b.pool.Get().(*permit[Req, Res])
	if p == nil {
		p = &permit[Req, Res]{b: b, reply: make(chan reply[Req, Res])}
	}
	return tower.NewPermit(p, p.Token()), nil
}

// Close stops the worker and waits for it to exit. From then on Ready and
// Call fail with ErrClosed, even on a permit reserved before Close: so do
// the requests still queued or in the worker's hand, and the callers
// waiting in Ready are woken with it. If the inner service failed first,
// they get its *ServiceError instead. A caller the worker has already
// handed the inner permit to goes on with its call. Close is idempotent and
// always returns nil.
func (b *Buffer[Req, Res]) Close() error {
	b.c.close()
	return nil
}

// permit is the record behind a Buffer's permit: it stands for one slot,
// and carries the channel on which the worker answers its holder.
type permit[Req, Res any] struct {
	tower.Ticket
	b     *Buffer[Req, Res]
	reply chan reply[Req, Res] // unbuffered: the worker hands over to a waiting caller
	round uint64               // counts the record's calls; the current one's answer carries it
}

func (p *permit[Req, Res]) CallReserved(ctx context.Context, token uint64, req Req) (Res, error) {
	p.MustRedeem(token)
	b := p.b
	inner, err := b.c.ready(ctx, p)
	// Back to the pool only now that the wait is over. An answer the worker
	// still owes an earlier holder of p carries an older round and is
	// refused by whoever holds p next.
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
	b.c.slots.Release()
}

// message is a queued request's claim on the worker: it asks for the inner
// service's readiness on behalf of a caller. It travels by value.
type message[Req, Res any] struct {
	ctx   context.Context // the caller's: the worker waits for readiness under it
	p     *permit[Req, Res]
	round uint64
}

type reply[Req, Res any] struct {
	round  uint64
	permit tower.Permit[Req, Res]
	err    error
}

// ready gets the inner service's permit for a caller holding p: at once if
// nothing is ahead and the inner service is ready now, or from the worker.
func (c *core[Req, Res]) ready(ctx context.Context, p *permit[Req, Res]) (tower.Permit[Req, Res], error) {
	if err := c.shutErr(); err != nil {
		c.slots.Release()
		return tower.Permit[Req, Res]{}, err
	}
	if c.pending.Load() == 0 {
		// Nothing queued, nothing in the worker's hand: ask as the worker
		// would. A call that queues meanwhile arrived after this one.
		inner, ok, err := tower.ReadyNow(c.inner)
		switch {
		case ok:
			c.slots.Release()
			return inner, nil
		case err != nil:
			c.slots.Release()
			return inner, c.fail(err)
		}
		// Not ready now: queue behind whoever queued meanwhile.
	}
	c.pending.Add(1)
	if c.sink != nil {
		c.queuedIn() // before the worker can see the request
	}
	p.round++
	select {
	case c.queue <- message[Req, Res]{ctx: ctx, p: p, round: p.round}:
	default:
		panic("buffer: queue full although a slot was reserved")
	}
	return c.await(ctx, p)
}

// await waits for the worker's answer to p's current round.
func (c *core[Req, Res]) await(ctx context.Context, p *permit[Req, Res]) (tower.Permit[Req, Res], error) {
	for {
		select {
		case r := <-p.reply:
			if r.round != p.round {
				r.permit.Release() // owed to an earlier holder of p, who left
				continue
			}
			if err := gone(ctx); r.err == nil && err != nil {
				// The permit came at the instant the caller's deadline
				// passed, before its context noticed: the caller has given
				// up.
				r.permit.Release()
				return tower.Permit[Req, Res]{}, err
			}
			return r.permit, r.err
		case <-ctx.Done():
			return tower.Permit[Req, Res]{}, ctx.Err()
		case <-c.stopped:
			return tower.Permit[Req, Res]{}, c.shutErr()
		}
	}
}
