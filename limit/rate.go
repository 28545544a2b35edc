package limit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/mono"
	"github.com/towergo/tower/internal/safe"
	"github.com/towergo/tower/internal/waitq"
	"github.com/towergo/tower/metrics"
)

// Rate is middleware that lets at most num requests through per period
// with tower's fixed window (tower's RateLimit). The first Ready after a
// window ended opens a window of length per with num places, and each
// Ready takes a place. When the window is full, Ready waits, first come
// first served, until it ends; if anyone waits then, the next window opens
// at that instant and its places go to the oldest waiters. Only a Ready or
// a waiter opens a window, not construction or an idle window's end. The
// bound holds per window, not per stretch of time: across a window's end
// up to twice num go through at once (a [Bucket] avoids that).
//
// Ready takes its place before it asks the inner service, and gives it
// back if that fails or ctx ends meanwhile; a waiting caller holds nothing
// of the inner service's. A place released unused goes back to its window
// if that window is still open, and is lost otherwise.
//
// A Rate is safe for concurrent use; unlike tower's RateLimit, which
// cannot be cloned, one Rate is one rate shared by all its callers. It
// allocates nothing when a place is free. Build one with [NewRate]. Req
// and Res are the request and response types.
type Rate[Req, Res any] struct {
	inner tower.Service[Req, Res]
	num   int
	per   time.Duration
	sink  metrics.Sink // nil: no metrics
	wraps tower.WrapPool[Req, Res]

	// The current window, and its places left tagged with its number, so
	// that a lock-free Ready takes a place only from the window it saw.
	cur    atomic.Pointer[window]
	places atomic.Uint64 // tag(window) | places left
	queued atomic.Int32  // len(q), for the lock-free path

	mu    sync.Mutex
	q     waitq.Queue // Value of a granted waiter: its place's window
	timer *time.Timer // wakes the queue when the window ends
	armed bool        // timer is set and has not fired
}

// A window is immutable once published.
type window struct {
	n     uint64        // counts windows opened; a place belongs to one
	until time.Duration // its end
}

// Places are counted in the low 40 bits of Rate.places, and the high 24
// bits hold the low bits of the window's number.
const (
	placeBits = 40
	placeMask = 1<<placeBits - 1
	// MaxRate is the largest number of requests a Rate lets through per
	// period.
	MaxRate = placeMask
)

func tag(n uint64) uint64 { return n << placeBits }

// NewRate returns inner wrapped in a [Rate] of num requests per period. A
// per too long for the clock is a window that never ends: num requests in
// all. It panics if inner is nil (a typed nil too), num is below 1 or
// above MaxRate, per is not positive, or an option is nil.
func NewRate[Req, Res any](inner tower.Service[Req, Res], num int, per time.Duration, opts ...Option) *Rate[Req, Res] {
	if isnil.Is(inner) {
		panic("limit.NewRate: inner is nil")
	}
	validateRate("limit.NewRate", num, per)
	o := newOptions("limit.NewRate", opts)
	return &Rate[Req, Res]{inner: inner, num: num, per: per, sink: o.sink}
}

// NewRateLayer returns a Layer that wraps each service in a [Rate] of its
// own, with num, per and opts. It panics as [NewRate] does, for the
// parameters at once.
func NewRateLayer[Req, Res any](num int, per time.Duration, opts ...Option) tower.Layer[Req, Res] {
	validateRate("limit.NewRateLayer", num, per)
	newOptions("limit.NewRateLayer", opts)
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return NewRate(inner, num, per, opts...)
	})
}

func validateRate(fn string, num int, per time.Duration) {
	if num < 1 || num > MaxRate {
		panic(fmt.Sprintf("%s: num must be between 1 and %d, got %d", fn, MaxRate, num))
	}
	if per <= 0 {
		panic(fmt.Sprintf("%s: per must be positive, got %v", fn, per))
	}
}

// now reads the monotonic clock, on the scale of the windows' times.
func (r *Rate[Req, Res]) now() time.Duration { return mono.Now() }

// Ready takes a place in the current window, waiting for the next window
// if this one is full, then waits for the inner service. A free place is
// taken even if ctx is done. If ctx ends while Ready waits for a window,
// it returns ctx.Err() and holds no place.
func (r *Rate[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	window, err := r.reserve(ctx)
	if err != nil {
		return tower.Permit[Req, Res]{}, err
	}
	held := true
	defer func() {
		// The inner service failed, or panicked: give the place back.
		if held {
			r.giveBack(window)
		}
	}()
	inner, err := r.inner.Ready(ctx)
	if err != nil {
		return inner, err
	}
	held = false
	return r.wraps.WrapNoted((*rateWrapper[Req, Res])(r), inner, window), nil
}

// reserve takes a place and returns the window it belongs to.
func (r *Rate[Req, Res]) reserve(ctx context.Context) (uint64, error) {
	if r.queued.Load() == 0 {
		if w := r.cur.Load(); w != nil && r.now() < w.until {
			if r.takePlace(w.n) {
				return w.n, nil
			}
		}
	}
	return r.reserveSlow(ctx)
}

// takePlace takes a place in window n, if it is still the current one and
// has one left.
func (r *Rate[Req, Res]) takePlace(n uint64) bool {
	for s := r.places.Load(); s&^placeMask == tag(n) && s&placeMask > 0; s = r.places.Load() {
		if r.places.CompareAndSwap(s, s-1) {
			return true
		}
	}
	return false
}

// reserveSlow takes a place under the lock, opening a window if need be,
// or waits in line for one.
func (r *Rate[Req, Res]) reserveSlow(ctx context.Context) (uint64, error) {
	r.mu.Lock()
	if r.q.Len() == 0 {
		w := r.roll(r.now())
		if r.takePlace(w.n) {
			r.mu.Unlock()
			return w.n, nil
		}
	}
	if err := ctx.Err(); err != nil {
		r.mu.Unlock()
		return 0, err
	}
	w := waitq.New()
	r.q.Push(w)
	r.queued.Add(1)
	r.arm()
	r.mu.Unlock()
	if r.sink == nil {
		return r.wait(ctx, w)
	}
	r.watched(w)
	n, err := r.wait(ctx, w)
	r.unwatched(n, err)
	return n, err
}

// wait waits until w is granted a place, and returns its window, or
// withdraws w when ctx ends.
func (r *Rate[Req, Res]) wait(ctx context.Context, w *waitq.Waiter) (uint64, error) {
	select {
	case <-w.Ready:
		return w.Value, nil
	case <-ctx.Done():
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.q.Remove(w) {
		return w.Value, nil // granted as ctx ended: the grant stands
	}
	r.queued.Add(-1)
	return 0, ctx.Err()
}

// watched tells the sink that w waits. If the sink panics, w leaves the
// queue (or gives back a place granted meanwhile) and the panic goes on.
func (r *Rate[Req, Res]) watched(w *waitq.Waiter) {
	safe.Undo(func() { r.sink.Add(metrics.Waiting, 1) }, func() { r.withdraw(w) })
}

// withdraw takes w out of the queue, or gives back the place it was
// granted.
func (r *Rate[Req, Res]) withdraw(w *waitq.Waiter) {
	r.mu.Lock()
	removed := r.q.Remove(w)
	if removed {
		r.queued.Add(-1)
	}
	r.mu.Unlock()
	if !removed {
		r.giveBack(w.Value)
	}
}

// unwatched tells the sink that a wait is over, with window n or err. If
// the sink panics, a place granted goes back first.
func (r *Rate[Req, Res]) unwatched(n uint64, err error) {
	safe.Undo(func() { r.sink.Add(metrics.Waiting, -1) }, func() {
		if err == nil {
			r.giveBack(n)
		}
	})
}

// roll opens a new window if the current one has ended, and returns the
// current window. r.mu must be held.
func (r *Rate[Req, Res]) roll(now time.Duration) *window {
	w := r.cur.Load()
	if w != nil && now < w.until {
		return w
	}
	n := uint64(1)
	if w != nil {
		n = w.n + 1
	}
	// A period too long for the clock saturates: that window never ends,
	// rather than ending in the past and letting everyone through.
	w = &window{n: n, until: mono.Add(now, r.per)}
	// Published before its places, so that a taker that sees the places
	// tagged with n finds window n current.
	r.cur.Store(w)
	r.places.Store(tag(n) | uint64(r.num))
	return w
}

// arm sets the timer for the end of the window, if it is not set.
// r.mu must be held.
func (r *Rate[Req, Res]) arm() {
	if r.armed {
		return
	}
	r.armed = true
	d := r.cur.Load().until - r.now()
	if r.timer == nil {
		r.timer = time.AfterFunc(d, r.windowEnded)
	} else {
		r.timer.Reset(d)
	}
}

// windowEnded runs on the timer: if anyone waits, it opens the next
// window and grants its places to the oldest waiters; if not, the next
// Ready opens it. The timer may be set for an earlier window's end (it is
// not moved when waiters leave and a Ready opens a window): then roll
// finds the window open, grants nothing, and the timer is set again.
func (r *Rate[Req, Res]) windowEnded() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.armed = false
	if r.q.Len() == 0 {
		return
	}
	r.grant(r.roll(r.now()))
	if r.q.Len() > 0 {
		r.arm()
	}
}

// grant hands free places of window w to waiters, oldest first. r.mu must
// be held.
func (r *Rate[Req, Res]) grant(w *window) {
	for r.q.Len() > 0 && r.takePlace(w.n) {
		r.q.Wake(w.n, nil)
		r.queued.Add(-1)
	}
}

// giveBack returns an unused place to window n, if that window is still
// the current one: to the oldest waiter, or to the window's count.
func (r *Rate[Req, Res]) giveBack(n uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.cur.Load()
	if w == nil || w.n != n || r.now() >= w.until {
		return
	}
	if r.q.Wake(n, nil) {
		r.queued.Add(-1)
		return
	}
	r.places.Add(1) // the tag is n's: only this lock opens windows
}

// rateWrapper is the Rate's tower.NotedWrapper, kept off its method set;
// a permit's note is the window its place belongs to.
type rateWrapper[Req, Res any] Rate[Req, Res]

// CallNoted sends req: the permit's place is used.
func (w *rateWrapper[Req, Res]) CallNoted(ctx context.Context, inner tower.Permit[Req, Res], _ uint64, req Req) (Res, error) {
	return inner.Call(ctx, req)
}

// ReleaseNoted releases inner and gives the place back to its window,
// even if inner's Release panics.
func (w *rateWrapper[Req, Res]) ReleaseNoted(inner tower.Permit[Req, Res], window uint64) {
	defer (*Rate[Req, Res])(w).giveBack(window)
	inner.Release()
}
