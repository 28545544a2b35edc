package limit

import (
	"context"
	"fmt"
	"sync"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/sema"
	"github.com/towergo/tower/metrics"
)

// A Semaphore holds the permits of one or more [Concurrency] limits.
// Waiters are served first come, first served: a permit given back goes to
// the goroutine that has waited longest, and wakes only that one.
//
// Share one among services with [NewConcurrencyWith] or
// [NewSharedConcurrencyLayer] to put them under one limit. A Semaphore is
// safe for concurrent use. The zero Semaphore is not usable; make one with
// [NewSemaphore].
type Semaphore struct {
	s *sema.Sema
}

// NewSemaphore returns a Semaphore with max permits. It panics unless
// 1 <= max <= 1<<32-1.
func NewSemaphore(max int) *Semaphore {
	validateMax("limit.NewSemaphore", max)
	return &Semaphore{s: sema.New(max)}
}

func validateMax(fn string, max int) {
	if max < 1 || max > sema.MaxUnits {
		panic(fmt.Sprintf("%s: max must be between 1 and %d, got %d", fn, sema.MaxUnits, max))
	}
}

// Available returns the number of permits free now. It is a snapshot: other
// goroutines may take or give back permits at any time.
func (s *Semaphore) Available() int { return s.s.Available() }

// Waiting returns the number of goroutines waiting in Ready for a permit,
// as a snapshot. A permit is free only when nobody waits for one.
func (s *Semaphore) Waiting() int { return s.s.Waiting() }

// Concurrency is middleware that limits how many requests are in flight in
// the inner service: tower's ConcurrencyLimit. Ready takes a permit from the
// semaphore, waiting in line if none is free, and only then asks the inner
// service, so a caller waiting for a permit holds nothing of the inner
// service's. If the inner service fails or ctx ends while Ready waits for
// it, the permit is given back. A request is in flight from the moment Ready
// reserves its permit until its call returns, with a response, an error or
// a panic, or until the reservation is released unused.
//
// A caller waiting in Ready for a permit holds, beyond its own goroutine,
// its place in the queue, the channel it is woken on, and the runtime's
// record of its select; the request path allocates nothing when a permit
// is free. The record behind a permit lives in a slot of the semaphore's,
// claimed with the permit in one atomic step (8 slots for each of its up
// to 16 stripes), so most permits need no pool; the limit keeps a table of
// those records, of up to 128 pointers, and the records themselves once
// used. A permit that comes without a slot takes its record from a
// sync.Pool.
//
// A Concurrency is safe for concurrent use; build one with [NewConcurrency]
// or [NewConcurrencyWith]. Req and Res are the request and response types.
type Concurrency[Req, Res any] struct {
	inner tower.Service[Req, Res]
	sem   *Semaphore
	sink  metrics.Sink // nil: no metrics
	slots []*record[Req, Res]
	spare sync.Pool // *record[Req, Res]s of permits whose unit came without a slot
}

// newConcurrency is the limit with its table of records, one per slot of
// sem's.
func newConcurrency[Req, Res any](inner tower.Service[Req, Res], sem *Semaphore, sink metrics.Sink) *Concurrency[Req, Res] {
	return &Concurrency[Req, Res]{inner: inner, sem: sem, sink: sink, slots: make([]*record[Req, Res], sem.s.Slots())}
}

// NewConcurrency returns inner wrapped in a limit of max requests in flight,
// with a [Semaphore] of its own. It panics if inner is nil (a typed nil
// too), unless 1 <= max <= 1<<32-1, or if an option is nil.
func NewConcurrency[Req, Res any](inner tower.Service[Req, Res], max int, opts ...Option) *Concurrency[Req, Res] {
	if isnil.Is(inner) {
		panic("limit.NewConcurrency: inner is nil")
	}
	validateMax("limit.NewConcurrency", max)
	o := newOptions("limit.NewConcurrency", opts)
	return newConcurrency(inner, NewSemaphore(max), o.sink)
}

// NewConcurrencyWith returns inner wrapped in a limit whose permits come
// from sem, which other services may share. It panics if inner (a typed
// nil too), sem or an option is nil. Each service reports its own requests
// to the sink of its [WithMetrics], whatever the others sharing sem do.
func NewConcurrencyWith[Req, Res any](inner tower.Service[Req, Res], sem *Semaphore, opts ...Option) *Concurrency[Req, Res] {
	if isnil.Is(inner) {
		panic("limit.NewConcurrencyWith: inner is nil")
	}
	if isnil.Is(sem) {
		panic("limit.NewConcurrencyWith: sem is nil")
	}
	o := newOptions("limit.NewConcurrencyWith", opts)
	return newConcurrency(inner, sem, o.sink)
}

// NewConcurrencyLayer returns a Layer that limits each service it wraps to
// max requests in flight, each with a semaphore of its own, and opts. It
// panics unless 1 <= max <= 1<<32-1, or if an option is nil.
func NewConcurrencyLayer[Req, Res any](max int, opts ...Option) tower.Layer[Req, Res] {
	validateMax("limit.NewConcurrencyLayer", max) // now, not when the layer is used
	newOptions("limit.NewConcurrencyLayer", opts)
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return NewConcurrency(inner, max, opts...)
	})
}

// NewSharedConcurrencyLayer returns a Layer that puts every service it wraps
// under the one limit held by sem, with opts. It panics if sem or an
// option is nil.
func NewSharedConcurrencyLayer[Req, Res any](sem *Semaphore, opts ...Option) tower.Layer[Req, Res] {
	if isnil.Is(sem) {
		panic("limit.NewSharedConcurrencyLayer: sem is nil")
	}
	newOptions("limit.NewSharedConcurrencyLayer", opts)
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return NewConcurrencyWith(inner, sem, opts...)
	})
}

// Semaphore returns the semaphore the limit takes its permits from.
func (c *Concurrency[Req, Res]) Semaphore() *Semaphore { return c.sem }

// Ready takes a permit, then waits for the inner service. A free permit is
// taken even if ctx is already done. If ctx ends first, Ready returns
// ctx.Err() unchanged; if the inner service fails or ctx ends while waiting
// for it, the permit is given back and its error returned.
func (c *Concurrency[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	slot, ok := c.sem.s.TryAcquireSlot()
	if !ok {
		if err := c.acquire(ctx); err != nil {
			return tower.Permit[Req, Res]{}, err
		}
	}
	held := true
	defer func() {
		// The inner service failed, or it or the sink panicked: give the
		// permit back.
		if held {
			c.release(slot)
		}
	}()
	if c.sink != nil {
		c.sink.Add(metrics.InFlight, 1)
	}
	p, err := c.inner.Ready(ctx)
	if err != nil {
		return p, err
	}
	held = false
	var rec *record[Req, Res]
	if slot != sema.NoSlot {
		rec = c.slots[slot] // this caller's until the slot is freed
	}
	if rec == nil {
		rec = c.newRecord(slot)
	}
	rec.inner = p
	return tower.NewPermit(rec, rec.Token()), nil
}

// newRecord returns a record for a permit with slot whose place in the
// table is still empty, putting it there, or a pooled one for a permit
// without a slot.
func (c *Concurrency[Req, Res]) newRecord(slot int) *record[Req, Res] {
	if slot == sema.NoSlot {
		if rec, _ := c.spare.Get().(*record[Req, Res]); rec != nil {
			return rec
		}
		return &record[Req, Res]{c: c, slot: sema.NoSlot}
	}
	rec := &record[Req, Res]{c: c, slot: slot}
	c.slots[slot] = rec
	return rec
}

// acquire waits in line for a permit, which comes without a slot.
func (c *Concurrency[Req, Res]) acquire(ctx context.Context) error {
	if c.sink == nil {
		return c.sem.s.Acquire(ctx)
	}
	return c.sem.s.AcquireWatched(ctx, (*waiters[Req, Res])(c))
}

// waiters tells the limit's sink of the callers waiting for a permit. It
// is the limit itself, kept off its method set, so that it goes in the
// semaphore's Watcher without an allocation.
type waiters[Req, Res any] Concurrency[Req, Res]

func (w *waiters[Req, Res]) Waiting(delta int64) { w.sink.Add(metrics.Waiting, delta) }

// release gives a permit back, with its slot if it came with one. The
// request leaves InFlight first, so that the count never shows more
// requests than the limit allows.
func (c *Concurrency[Req, Res]) release(slot int) {
	if c.sink != nil {
		c.releaseWatched(slot)
		return
	}
	c.sem.s.ReleaseSlot(slot)
}

// releaseWatched is release with a sink, which gives the permit back even
// if the sink panics.
func (c *Concurrency[Req, Res]) releaseWatched(slot int) {
	defer c.sem.s.ReleaseSlot(slot)
	c.sink.Add(metrics.InFlight, -1)
}

// record is the record behind a permit. Most permits' units come with a
// slot of the semaphore (each stripe of it has sema.SlotsPerStripe): their
// record lives in the limit's table at the slot's number, and the slot is
// claimed and freed in the same atomic steps that take and give back the
// unit, so issuing such a permit needs no pool. The others' records come
// from the limit's sync.Pool. Either way its Ticket refuses stale copies of
// the permit.
type record[Req, Res any] struct {
	tower.Ticket
	c     *Concurrency[Req, Res]
	inner tower.Permit[Req, Res]
	slot  int
}

// The two uses of a permit read what they need out of the redeemed record
// first, and never touch it again: a pooled record goes back to the pool
// before any inner code runs, and a slotted one is the next caller's as
// soon as its slot is released. (A helper for the few lines would not be
// inlined, and every request would pay for the call.)

func (r *record[Req, Res]) CallReserved(ctx context.Context, token uint64, req Req) (Res, error) {
	r.MustRedeem(token)
	c, slot, inner := r.c, r.slot, r.inner
	r.inner = tower.Permit[Req, Res]{}
	if slot == sema.NoSlot {
		c.spare.Put(r)
	}
	// Deferred so that a panicking inner service does not leak the permit.
	// Once it runs, a slotted record is another caller's too.
	defer c.release(slot)
	return inner.Call(ctx, req)
}

func (r *record[Req, Res]) ReleaseReserved(token uint64) {
	if !r.Redeem(token) {
		return
	}
	c, slot, inner := r.c, r.slot, r.inner
	r.inner = tower.Permit[Req, Res]{}
	if slot == sema.NoSlot {
		c.spare.Put(r)
	}
	defer c.release(slot)
	inner.Release()
}
