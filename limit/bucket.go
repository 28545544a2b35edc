package limit

import (
	"context"
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

// Bucket is middleware that limits requests with a token bucket, the limit
// Go users know from golang.org/x/time/rate: the bucket holds up to burst
// tokens, starts full, and gains one token every per/num (rounded up to the
// nanosecond, so the rate is never above num per period). Each request
// takes a token. Over any stretch of time d, a Bucket lets through at most
// burst + d/(per/num) requests, rounded down, whereas a fixed window
// ([Rate]) lets through up to twice num across a window's end.
//
// Ready takes a token, then asks the inner service; if the inner service
// fails, panics, or ctx ends while Ready waits for it, the token goes back.
// A permit that is called has used its token; a permit released unused
// gives its token back if no token was taken after it (a later taker
// holds the next instant: see the package doc): to the oldest waiter at
// once if anyone waits, to the bucket otherwise, which never holds more
// than burst.
//
// When no token is there, Ready waits, first come first served, and the
// oldest waiter is woken at exactly the instant its token is there, by one
// timer set for that instant (not a timer per waiter). A caller that finds
// a token while others wait does not take it: it queues behind them. With
// a done ctx and no token free for it, Ready returns ctx.Err() at once
// without queueing: that is the "ready now?" probe. A waiter whose ctx ends
// leaves the queue and holds nothing, unless its token was granted as ctx
// ended: then the grant stands, as the contract lets it.
//
// The package doc lists where a Bucket differs from x/time/rate's
// Limiter.Wait, and why.
//
// A Bucket is safe for concurrent use; one Bucket is shared by all its
// callers and enforces one rate for all of them. When nobody waits, Ready
// takes a token with one compare-and-swap, without a lock, and the request
// path allocates nothing: permits' records come from a pool. A waiter
// holds, beyond its goroutine, its place in the queue and the channel it is
// woken on. Build one with [NewBucket]. Req and Res are the request and
// response types.
type Bucket[Req, Res any] struct {
	inner  tower.Service[Req, Res]
	g      gcra
	origin time.Duration // the reading at construction: the bucket's 0
	sink   metrics.Sink  // nil: no metrics
	wraps  tower.WrapPool[Req, Res]

	// The bucket's theoretical arrival time (see gcra), on the bucket's
	// own scale of readings since origin, so that it starts at 0, full,
	// and is never negative. Taking a token is a compare-and-swap of it.
	tat    atomic.Int64
	queued atomic.Int32 // len(q), for the lock-free path

	mu    sync.Mutex
	q     waitq.Queue
	timer *time.Timer // wakes the queue when its head's token is there
}

// NewBucket returns inner wrapped in a token bucket of burst tokens that
// gains num tokens per period, one every per/num rounded up to the
// nanosecond. It starts full: burst requests go through at once. A per so
// long that the bucket's tokens are due past the largest Duration (about
// 292 years on), up to math.MaxInt64, is a bucket that never refills: it
// lets burst requests through in all, and once its clock has run out that
// far, a token given back unused is lost.
//
// x/time/rate.NewLimiter(r, b) is NewBucket(inner, n, per, b) with
// n/per = r: rate.Every(100*time.Millisecond) with burst 3 is
// NewBucket(inner, 1, 100*time.Millisecond, 3), or 10 per second.
//
// It panics, naming the parameter, if inner is nil (a typed nil too), num
// is below 1 or above per in nanoseconds (a token per nanosecond is the
// finest rate), per is not positive, burst is below 1 or burst intervals
// are longer than a Duration holds, or an option is nil.
func NewBucket[Req, Res any](inner tower.Service[Req, Res], num int, per time.Duration, burst int, opts ...Option) *Bucket[Req, Res] {
	if isnil.Is(inner) {
		panic("limit.NewBucket: inner is nil")
	}
	g := newGCRA("limit.NewBucket", num, per, burst)
	o := newOptions("limit.NewBucket", opts)
	return &Bucket[Req, Res]{inner: inner, g: g, origin: mono.Now(), sink: o.sink}
}

// NewBucketLayer returns a Layer that limits each service it wraps with a
// token bucket of its own, as [NewBucket] does with num, per, burst and
// opts. It panics as NewBucket does, at once for the parameters and when a
// service is wrapped for a nil one.
func NewBucketLayer[Req, Res any](num int, per time.Duration, burst int, opts ...Option) tower.Layer[Req, Res] {
	newGCRA("limit.NewBucketLayer", num, per, burst)
	newOptions("limit.NewBucketLayer", opts)
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return NewBucket(inner, num, per, burst, opts...)
	})
}

// now reads the monotonic clock on the bucket's scale.
func (b *Bucket[Req, Res]) now() time.Duration { return mono.Now() - b.origin }

// Ready takes a token, waiting in line if none is free, then waits for the
// inner service. A free token is taken even if ctx is already done. If ctx
// ends while Ready waits for a token, it returns ctx.Err() unchanged and
// holds nothing.
func (b *Bucket[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	mark, err := b.take(ctx)
	if err != nil {
		return tower.Permit[Req, Res]{}, err
	}
	held := true
	defer func() {
		// The inner service failed, or panicked: give the token back.
		if held {
			b.giveBack(mark)
		}
	}()
	inner, err := b.inner.Ready(ctx)
	if err != nil {
		return inner, err
	}
	held = false
	return b.wraps.WrapNoted((*bucketWrapper[Req, Res])(b), inner, uint64(mark)), nil
}

// take takes a token, lock-free if nobody waits and one is there, and
// returns its mark: the bucket's state its take left (see gcra.reserve).
func (b *Bucket[Req, Res]) take(ctx context.Context) (time.Duration, error) {
	if b.queued.Load() == 0 {
		if mark, wait := b.tryTake(b.now()); wait == 0 {
			return mark, nil
		}
	}
	return b.takeSlow(ctx)
}

// tryTake takes a token at now and returns its mark and 0 if one is
// there; otherwise it takes nothing and returns how long from now until
// one is.
func (b *Bucket[Req, Res]) tryTake(now time.Duration) (mark, wait time.Duration) {
	for {
		tat := b.tat.Load()
		next, wait := b.g.take(time.Duration(tat), now, 1)
		if wait > 0 {
			return 0, wait
		}
		if b.tat.CompareAndSwap(tat, int64(next)) {
			return next, 0
		}
	}
}

// takeSlow takes a token under the lock if nobody waits and one is there,
// or waits in line for one.
func (b *Bucket[Req, Res]) takeSlow(ctx context.Context) (time.Duration, error) {
	b.mu.Lock()
	now := b.now()
	if b.q.Len() == 0 {
		if mark, wait := b.tryTake(now); wait == 0 {
			b.mu.Unlock()
			return mark, nil
		}
	}
	if err := ctx.Err(); err != nil {
		b.mu.Unlock()
		return 0, err
	}
	w := waitq.New()
	b.q.Push(w)
	b.queued.Add(1)
	// A token that came while the lock was free goes to the oldest waiter,
	// this one perhaps; then the timer is set for the next.
	b.grant(now)
	b.mu.Unlock()
	if b.sink == nil {
		return b.wait(ctx, w)
	}
	b.watched(w)
	mark, err := b.wait(ctx, w)
	b.unwatched(mark, err)
	return mark, err
}

// wait waits until w is granted a token, and returns its mark, or
// withdraws w when ctx ends.
func (b *Bucket[Req, Res]) wait(ctx context.Context, w *waitq.Waiter) (time.Duration, error) {
	select {
	case <-w.Ready:
		return time.Duration(w.Value), nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.q.Remove(w) {
		return time.Duration(w.Value), nil // granted as ctx ended: the grant stands
	}
	b.queued.Add(-1)
	// The timer stays set for the instant the next token is there, which
	// is now the next waiter's.
	return 0, ctx.Err()
}

// watched tells the sink that w waits. If the sink panics, the panic goes
// on up to the caller, whose wait is over: w leaves the queue first, and a
// token it was granted meanwhile goes back.
func (b *Bucket[Req, Res]) watched(w *waitq.Waiter) {
	safe.Undo(func() { b.sink.Add(metrics.Waiting, 1) }, func() { b.withdraw(w) })
}

// withdraw takes w out of the queue, or gives back the token it was
// granted.
func (b *Bucket[Req, Res]) withdraw(w *waitq.Waiter) {
	b.mu.Lock()
	removed := b.q.Remove(w)
	if removed {
		b.queued.Add(-1)
	}
	b.mu.Unlock()
	if !removed {
		b.giveBack(time.Duration(w.Value))
	}
}

// unwatched tells the sink that a wait is over, granted the token of mark
// if err is nil. If the sink panics, the panic goes on up to the caller,
// and a token the wait was granted goes back first.
func (b *Bucket[Req, Res]) unwatched(mark time.Duration, err error) {
	safe.Undo(func() { b.sink.Add(metrics.Waiting, -1) }, func() {
		if err == nil {
			b.giveBack(mark)
		}
	})
}

// grant hands the tokens there at now to the waiters, oldest first, each
// with its mark, and sets the timer for the instant the next one is there
// if anyone is still waiting. b.mu must be held.
func (b *Bucket[Req, Res]) grant(now time.Duration) {
	for b.q.Len() > 0 {
		mark, wait := b.tryTake(now)
		if wait > 0 {
			b.setTimer(wait)
			return
		}
		b.q.Wake(uint64(mark), nil)
		b.queued.Add(-1)
	}
}

// setTimer sets the one timer to run tokenDue after d. b.mu must be held.
//
// The timer is set for the instant the oldest waiter's token is there,
// again whenever a waiter queues, and left alone when waiters leave: the
// next waiter's token is there at the same instant. It is early only when
// a lock-free Ready took a token as the first waiter queued: then tokenDue
// grants nothing and sets it again. If it fires as it is set again,
// tokenDue runs twice, and the second run finds nothing to do but set it
// again.
func (b *Bucket[Req, Res]) setTimer(d time.Duration) {
	if b.timer == nil {
		b.timer = time.AfterFunc(d, b.tokenDue)
	} else {
		b.timer.Reset(d)
	}
}

// tokenDue runs on the timer, at the instant the oldest waiter's token is
// there: it grants the tokens there to the waiters, and sets the timer
// again for the next if anyone is still waiting. If everyone waiting gave
// up, it does nothing.
func (b *Bucket[Req, Res]) tokenDue() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.grant(b.now())
}

// giveBack returns a token unused, the one whose take left the bucket at
// mark, if no token was taken after it (see gcra.giveBack); the oldest
// waiter, if any, then takes it, at now. The bucket never holds more than
// burst.
func (b *Bucket[Req, Res]) giveBack(mark time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// Under the lock, so that no waiter queues meanwhile and misses it;
	// with a compare-and-swap, since lock-free Readies take tokens.
	now := b.now()
	for {
		tat := b.tat.Load()
		if b.tat.CompareAndSwap(tat, int64(b.g.giveBack(time.Duration(tat), mark, now))) {
			break
		}
	}
	b.grant(now)
}

// bucketWrapper is the Bucket's tower.NotedWrapper, kept off its method
// set; a permit's note is its token's mark.
type bucketWrapper[Req, Res any] Bucket[Req, Res]

// CallNoted sends req: the permit's token is used.
func (w *bucketWrapper[Req, Res]) CallNoted(ctx context.Context, inner tower.Permit[Req, Res], _ uint64, req Req) (Res, error) {
	return inner.Call(ctx, req)
}

// ReleaseNoted releases inner and gives the permit's token back, even if
// inner's Release panics.
func (w *bucketWrapper[Req, Res]) ReleaseNoted(inner tower.Permit[Req, Res], mark uint64) {
	defer (*Bucket[Req, Res])(w).giveBack(time.Duration(mark))
	inner.Release()
}
