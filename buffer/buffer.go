package buffer

import (
	"context"
	"fmt"
	"sync"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/lifetime"
	"github.com/towergo/tower/internal/safe"
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
// When nothing is queued or in the worker's hand, a call skips the queue
// and does on its own goroutine what the worker would have done at once:
// it gives its slot back and, unless its caller has given up, asks the
// inner service whether it is ready now. This keeps the order, and saves
// two goroutine switches on the path that does not wait.
//
// The queue holds bound requests, plus one in the worker's hand while it
// waits for the inner service: a slot is freed when the worker takes a
// request in hand, as in tower 0.5. A request whose caller gives up before
// it reaches the inner service (its ctx ends, or its deadline passes, even
// at the instant the inner service becomes ready; or it had ended before
// Call) is skipped and never reaches the inner service; a reservation the
// inner service made for it is released.
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
// A panic in the inner service's Ready is that service failing its
// readiness, wherever it happens. On the worker it cannot reach a caller
// as a panic: the worker recovers it (and a runtime.Goexit) into a
// [*tower.PanicError], and the Buffer fails for good with a *ServiceError
// wrapping it, through which errors.As finds it; the worker exits, and the
// process lives on. On a caller's goroutine, which asks the inner service
// itself when it skips the queue, the Buffer fails the same way, gives the
// caller's slot back, and lets the panic go on up to that caller. A panic
// on the worker in anything else it calls (an inner permit's Release, for
// a caller that left; the metrics sink) fails the Buffer the same way. A
// panic in the inner service's Call happens on the caller's goroutine, and
// goes on up to the caller; it breaks nothing.
//
// A Buffer must be closed, or be unreachable, for its worker to stop: a
// Buffer that becomes unreachable, with no permit outstanding and no call
// in flight, is closed by the garbage collector.
//
// Memory and allocation: the queue's memory follows what is queued, not
// the bound: 32 bytes a queued request, in a ring that grows by doubling
// and shrinks by halving as the worker drains it. An idle Buffer holds
// about 2 KiB of heap whatever its bound (measured by
// TestIdleBufferMemory). A request allocates nothing but, rarely, the
// ring's growth: its permit's record, which carries the channel the worker
// answers on, comes from a pool and goes back to it, and a round number in
// each answer keeps an answer owed to an earlier holder from reaching a
// later one. While queued, a request holds about 290 bytes of heap (that
// record and channel, its place in the ring, and the runtime's record of
// its parked select; measured on linux/amd64 by TestQueuedRequestMemory),
// besides its caller's goroutine, parked in Call with a stack of 2 KiB or
// more.
//
// A Buffer is safe for concurrent use. Its zero value is not usable; call
// [New]. Req and Res are the request and response types.
type Buffer[Req, Res any] struct {
	c    *core[Req, Res] // what the worker shares; it must not point back here
	pool sync.Pool       // of *permit, which point here and keep the Buffer alive
}

// New returns inner behind a Buffer of bound slots, with opts, and starts
// its worker. It panics if inner is nil (or a typed nil, such as a nil
// pointer), if bound is below 1 or above 1<<32-1, or if an option is nil.
// The queue takes memory only as requests are queued, so a large bound
// costs nothing until it is used.
func New[Req, Res any](inner tower.Service[Req, Res], bound int, opts ...Option) *Buffer[Req, Res] {
	if isnil.Is(inner) {
		panic("buffer.New: nil inner service")
	}
	validateBound("buffer.New", bound)
	o := newOptions("buffer.New", opts)
	c := newCore(inner, bound, o.sink)
	b := &Buffer[Req, Res]{c: c}
	lifetime.OnUnreachable(b, (*core[Req, Res]).requestStop, c)
	go c.run()
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
//
// The worker may be waiting in the inner service's Ready, whose context
// Close cancels; Close waits until that Ready returns, however long an
// inner service that ignores its context takes. [Buffer.Shutdown] bounds
// that wait.
func (b *Buffer[Req, Res]) Close() error {
	b.c.shutdown(context.Background())
	return nil
}

// Shutdown stops the Buffer as Close does, and then waits for its worker
// to exit, as net/http's Server.Shutdown waits for its connections: it
// returns nil once the worker has exited, or ctx.Err() if ctx ends first.
// The worker then exits on its own once the inner service's Ready it waits
// in returns, and releases the permit that Ready granted; a later Close or
// Shutdown waits for it again. Shutdown, like Close, may be called any
// number of times, and with Close, from any goroutine.
func (b *Buffer[Req, Res]) Shutdown(ctx context.Context) error {
	return b.c.shutdown(ctx)
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
		// Nothing queued, nothing in the worker's hand: do what the worker
		// would. A call that queues meanwhile arrived after this one.
		if inner, done, err := c.skip(ctx); done {
			return inner, err
		}
		// Not ready now: queue behind whoever queued meanwhile.
	}
	c.pending.Add(1)
	if c.sink != nil {
		c.countQueued() // before the worker can see the request
	}
	p.round++
	c.q.put(message[Req, Res]{ctx: ctx, p: p, round: p.round})
	return c.await(ctx, p)
}

// skip does on the caller's goroutine what the worker would do at once
// with the caller's request in hand: give the slot back, then skip the
// request if its caller has given up, or else ask the inner service if it
// is ready now. It reports whether that settled the request (done): then
// the slot is given back, and inner or err is the answer; if not, the
// caller must queue, still holding its slot.
func (c *core[Req, Res]) skip(ctx context.Context) (inner tower.Permit[Req, Res], done bool, err error) {
	if err := gone(ctx); err != nil {
		c.slots.Release()
		return inner, true, err
	}
	inner, ok, err := c.readyNow()
	switch {
	case ok:
		c.slots.Release()
		return inner, true, nil
	case err != nil:
		c.slots.Release()
		return inner, true, c.fail(err)
	}
	return inner, false, nil
}

// staleRelease is the Where of a panic in the Release of a permit that was
// owed to a caller who had left.
const staleRelease = "the Release of an inner permit owed to a caller that left, on a Buffer's caller's goroutine"

// readyNowOnCaller is the Where of a panic in the inner service's Ready on
// a caller's goroutine, which fails the Buffer.
const readyNowOnCaller = "the inner service's Ready, on a Buffer's caller's goroutine"

// readyNow asks the inner service if it is ready now, on the caller's
// goroutine. A panic there is the inner service failing its readiness, as
// it is on the worker, so that the Buffer does not behave differently
// depending on which goroutine asked: the Buffer fails for good with the
// PanicError, the caller's slot goes back, and the panic goes on up to the
// caller. After a runtime.Goexit the same happens, and the caller's
// goroutine goes on exiting.
func (c *core[Req, Res]) readyNow() (p tower.Permit[Req, Res], ok bool, err error) {
	returned := false
	defer func() {
		if !returned {
			c.panicked(recover())
		}
	}()
	p, ok, err = tower.ReadyNow(c.inner)
	returned = true
	return p, ok, err
}

// panicked handles a panic with v (nil for runtime.Goexit) in the inner
// service's Ready on a caller's goroutine holding a slot. It must be called
// from the deferred function that recovered v.
func (c *core[Req, Res]) panicked(v any) {
	c.fail(safe.Recovered(readyNowOnCaller, v))
	c.slots.Release()
	if v != nil {
		panic(v)
	}
}

// countQueued reports to the sink the request about to be queued. A panic
// in the sink goes on up to the caller, whose request is then not queued,
// so that the worker never waits for it: the slot goes back, and the
// request leaves pending (and the count queuedIn may have made).
func (c *core[Req, Res]) countQueued() {
	counted := false
	defer func() {
		if !counted {
			c.queued.Add(-1)
			c.pending.Add(-1)
			c.slots.Release()
		}
	}()
	c.queuedIn()
	counted = true
}

// await waits for the worker's answer to p's current round.
func (c *core[Req, Res]) await(ctx context.Context, p *permit[Req, Res]) (tower.Permit[Req, Res], error) {
	for {
		select {
		case r := <-p.reply:
			if r.round != p.round {
				// Owed to an earlier holder of p, who left: the permit is
				// nobody's, and so is a panic in its Release. This caller
				// must go on waiting for its own answer, or the worker
				// would wait to hand it over.
				if perr := safe.Call(staleRelease, r.permit.Release); perr != nil {
					safe.Orphan(perr)
				}
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
