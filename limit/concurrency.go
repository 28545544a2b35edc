package limit

import (
	"context"
	"sync"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/internal/sema"
	"github.com/towergo/tower/metrics"
)

// A Semaphore holds the permits of one or more [Concurrency] limits.
// Waiters are served first come, first served: a permit given back goes to
// the oldest waiter. Share one with [NewConcurrencyWith] or
// [NewSharedConcurrencyLayer] to put services under one limit, as tower's
// GlobalConcurrencyLimitLayer does. A Semaphore is safe for concurrent
// use. The zero Semaphore is not usable; make one with [NewSemaphore].
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
	option.PanicIf(max < 1 || max > sema.MaxUnits, "%s: max must be between 1 and %d, got %d", fn, sema.MaxUnits, max)
}

// Available returns the number of permits free now, as a snapshot.
func (s *Semaphore) Available() int { return s.s.Available() }

// Waiting returns the number of goroutines waiting in Ready for a permit,
// as a snapshot. A permit is free only when nobody waits for one.
func (s *Semaphore) Waiting() int { return s.s.Waiting() }

// Concurrency is middleware that limits the requests in flight in the
// inner service: tower's ConcurrencyLimit. Ready takes a permit from the
// [Semaphore], waiting in line if none is free, and only then asks the
// inner service. If the inner service fails or ctx ends while Ready waits
// for it, the permit is given back. A request is in flight from Ready
// until its call returns (with a response, an error or a panic) or the
// permit is released unused.
//
// A Concurrency is safe for concurrent use, and allocates nothing when a
// permit is free. Build one with [NewConcurrency] or [NewConcurrencyWith].
type Concurrency[Req, Res any] struct {
	inner tower.Service[Req, Res]
	sem   *Semaphore
	sink  metrics.Sink // nil: no metrics
	slots []*record[Req, Res]
	spare sync.Pool // *record[Req, Res]s of permits whose unit came without a slot
}

func newConcurrency[Req, Res any](inner tower.Service[Req, Res], sem *Semaphore, sink metrics.Sink) *Concurrency[Req, Res] {
	return &Concurrency[Req, Res]{inner: inner, sem: sem, sink: sink, slots: make([]*record[Req, Res], sem.s.Slots())}
}

// NewConcurrency returns inner wrapped in a limit of max requests in flight,
// with a [Semaphore] of its own. It panics if inner is nil (a typed nil
// too), unless 1 <= max <= 1<<32-1, or if an option is nil.
func NewConcurrency[Req, Res any](inner tower.Service[Req, Res], max int, opts ...Option) *Concurrency[Req, Res] {
	option.PanicIf(isnil.Is(inner), "limit.NewConcurrency: inner is nil")
	validateMax("limit.NewConcurrency", max)
	o := newOptions("limit.NewConcurrency", opts)
	return newConcurrency(inner, NewSemaphore(max), o.sink)
}

// NewConcurrencyWith returns inner wrapped in a limit whose permits come
// from sem, which other services may share. Each reports only its own
// requests to its [WithMetrics] sink. It panics if inner (a typed nil too),
// sem or an option is nil.
func NewConcurrencyWith[Req, Res any](inner tower.Service[Req, Res], sem *Semaphore, opts ...Option) *Concurrency[Req, Res] {
	option.PanicIf(isnil.Is(inner), "limit.NewConcurrencyWith: inner is nil")
	option.PanicIf(isnil.Is(sem), "limit.NewConcurrencyWith: sem is nil")
	o := newOptions("limit.NewConcurrencyWith", opts)
	return newConcurrency(inner, sem, o.sink)
}

// NewConcurrencyLayer returns a Layer that wraps each service in a
// [Concurrency] of max with a semaphore of its own, and opts. It panics as
// [NewConcurrency] does.
func NewConcurrencyLayer[Req, Res any](max int, opts ...Option) tower.Layer[Req, Res] {
	validateMax("limit.NewConcurrencyLayer", max)
	newOptions("limit.NewConcurrencyLayer", opts)
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return NewConcurrency(inner, max, opts...)
	})
}

// NewSharedConcurrencyLayer returns a Layer that puts every service it wraps
// under the one limit held by sem, with opts. It panics if sem or an
// option is nil.
func NewSharedConcurrencyLayer[Req, Res any](sem *Semaphore, opts ...Option) tower.Layer[Req, Res] {
	option.PanicIf(isnil.Is(sem), "limit.NewSharedConcurrencyLayer: sem is nil")
	newOptions("limit.NewSharedConcurrencyLayer", opts)
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return NewConcurrencyWith(inner, sem, opts...)
	})
}

// Semaphore returns the semaphore the limit takes its permits from.
func (c *Concurrency[Req, Res]) Semaphore() *Semaphore { return c.sem }

// Ready takes a permit, then waits for the inner service. If ctx ends
// first, Ready returns ctx.Err(); if the inner Ready fails, the permit is
// given back and its error returned.
func (c *Concurrency[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	slot, ok := c.sem.s.TryAcquireSlot()
	if !ok {
		if err := c.sem.s.AcquireWatched(ctx, c.sink); err != nil {
			return tower.Permit[Req, Res]{}, err
		}
	}
	held := true
	defer func() {
		// The inner service failed, or it or the sink panicked.
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

// newRecord makes the record of slot, or gets a pooled one for NoSlot.
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

// release gives a permit back. InFlight drops first, so that it never
// shows more than the limit.
func (c *Concurrency[Req, Res]) release(slot int) {
	if c.sink != nil {
		c.releaseWatched(slot)
		return
	}
	c.sem.s.ReleaseSlot(slot)
}

// releaseWatched is release with a sink, even if the sink panics.
func (c *Concurrency[Req, Res]) releaseWatched(slot int) {
	defer c.sem.s.ReleaseSlot(slot)
	c.sink.Add(metrics.InFlight, -1)
}

// record is the record behind a permit: c.slots holds the record of each
// slot of the semaphore, and c.spare those of permits without one.
//
// Its two methods copy what they need out of the redeemed record and never
// touch it again: a pooled record goes back to the pool before inner code
// runs, and a slotted one is the next caller's once its slot is released.
// (The lines are repeated because a helper would not inline.)
type record[Req, Res any] struct {
	tower.Ticket
	c     *Concurrency[Req, Res]
	inner tower.Permit[Req, Res]
	slot  int
}

func (r *record[Req, Res]) CallReserved(ctx context.Context, token uint64, req Req) (Res, error) {
	r.MustRedeem(token)
	c, slot, inner := r.c, r.slot, r.inner
	r.inner = tower.Permit[Req, Res]{}
	if slot == sema.NoSlot {
		c.spare.Put(r)
	}
	// Deferred, so a panicking inner service does not leak the permit.
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
