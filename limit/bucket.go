package limit

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/mono"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/internal/waitq"
	"github.com/towergo/tower/metrics"
)

// Bucket is middleware that limits requests with a token bucket, as
// golang.org/x/time/rate does: the bucket holds up to burst tokens, starts
// full, and gains one every per/num; each request takes one. Over any
// stretch of time d it lets through at most burst + d/(per/num) requests,
// where a [Rate] lets up to twice num through across a window's end.
//
// Ready takes a token, then asks the inner service; if that fails, panics,
// or ctx ends meanwhile, the token goes back. A called permit has used its
// token. A permit released unused gives it back, to the oldest waiter or
// else the bucket, if no token was taken after it: released in the reverse
// of the order taken, as deferred Releases are, all go back.
//
// With no token, Ready waits first come first served, and a newcomer
// queues behind waiters even if a token is there; with a done ctx it
// returns ctx.Err() at once instead. A waiter whose ctx ends holds
// nothing, unless its token was granted as ctx ended: the grant stands.
// The package doc lists where this differs from x/time/rate.
//
// A Bucket is safe for concurrent use; all its callers share one rate.
// Ready allocates nothing unless it waits. Build one with [NewBucket].
type Bucket[Req, Res any] struct {
	units  units[Req, Res]
	g      gcra
	origin time.Duration // the reading at construction: the bucket's 0
	sink   metrics.Sink  // nil: no metrics

	// The bucket's tat (see gcra), in readings since origin: it starts at
	// 0, full, and is never negative. Taking a token CASes it.
	tat atomic.Int64

	line  waitq.Line  // waiters; its lock guards timer, and giving back
	timer *time.Timer // wakes the line when its head's token is there
}

// NewBucket returns inner wrapped in a token bucket of burst tokens that
// gains num tokens per period, one every per/num rounded up to the
// nanosecond. It starts full. Burst 1 spaces requests per/num apart; burst
// num lets a period's worth through at once after an idle period.
// x/time/rate.NewLimiter(r, b) is NewBucket(inner, n, per, b) with
// n/per = r. A per so long that tokens fall due past the largest Duration
// (about 292 years) makes a bucket that never refills: burst requests in
// all.
//
// It panics, naming the parameter, if inner is nil (a typed nil too), num
// is below 1 or above per in nanoseconds, per is not positive, burst is
// below 1 or burst intervals overflow a Duration, or an option is nil.
func NewBucket[Req, Res any](inner tower.Service[Req, Res], num int, per time.Duration, burst int, opts ...Option) *Bucket[Req, Res] {
	option.PanicIf(isnil.Is(inner), "limit.NewBucket: inner is nil")
	g := newGCRA("limit.NewBucket", num, per, burst)
	o := newOptions("limit.NewBucket", opts)
	b := &Bucket[Req, Res]{g: g, origin: mono.Now(), sink: o.sink}
	b.units.inner, b.units.giveBack = inner, b.giveBack
	return b
}

// NewBucketLayer returns a Layer that wraps each service in a [Bucket] of
// its own, with num, per, burst and opts. It panics as [NewBucket] does:
// for the parameters at once, for a nil service when it wraps one.
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
// inner service. If ctx ends while Ready waits for a token, it returns
// ctx.Err() and holds nothing.
func (b *Bucket[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	mark, err := b.take(ctx)
	if err != nil {
		return tower.Permit[Req, Res]{}, err
	}
	held := true
	defer func() {
		if held {
			b.giveBack(uint64(mark))
		}
	}()
	inner, err := b.units.inner.Ready(ctx)
	if err != nil {
		return inner, err
	}
	held = false
	return b.units.wraps.WrapNoted(&b.units, inner, uint64(mark)), nil
}

// take takes a token and returns its mark: the tat its take left.
func (b *Bucket[Req, Res]) take(ctx context.Context) (time.Duration, error) {
	if b.line.Len() == 0 {
		if mark, wait := b.tryTake(b.now()); wait == 0 {
			return mark, nil
		}
	}
	return b.takeSlow(ctx)
}

// tryTake takes a token at now and returns its mark and 0, or takes
// nothing and returns how long until one is there.
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

func (b *Bucket[Req, Res]) takeSlow(ctx context.Context) (time.Duration, error) {
	b.line.Lock()
	now := b.now()
	if b.line.Len() == 0 {
		if mark, wait := b.tryTake(now); wait == 0 {
			b.line.Unlock()
			return mark, nil
		}
	}
	if err := ctx.Err(); err != nil {
		b.line.Unlock()
		return 0, err
	}
	w := b.line.Join()
	// A token that came while the lock was free goes to the oldest waiter.
	// The timer stays set when a waiter leaves: the next one's token is due
	// at the same instant.
	b.grant(now)
	b.line.Unlock()
	mark, err := b.line.Wait(ctx, w, b.sink, b.units.giveBack)
	return time.Duration(mark), err
}

// grant hands the tokens there at now to the waiters, and sets the timer
// for the next one if anyone still waits. b.line must be held.
func (b *Bucket[Req, Res]) grant(now time.Duration) {
	for b.line.Len() > 0 {
		mark, wait := b.tryTake(now)
		if wait > 0 {
			b.setTimer(wait)
			return
		}
		b.line.Serve(uint64(mark))
	}
}

// setTimer sets the timer to run tokenDue after d. b.line must be held.
// If it fires early (a lock-free Ready took a token as the first waiter
// queued) or as it is reset, tokenDue grants nothing and sets it again.
func (b *Bucket[Req, Res]) setTimer(d time.Duration) {
	if b.timer == nil {
		b.timer = time.AfterFunc(d, b.tokenDue)
	} else {
		b.timer.Reset(d)
	}
}

func (b *Bucket[Req, Res]) tokenDue() {
	b.line.Lock()
	defer b.line.Unlock()
	b.grant(b.now())
}

// giveBack returns the unused token of mark, if no token was taken after
// it (see gcra.giveBack), to the oldest waiter or the bucket.
func (b *Bucket[Req, Res]) giveBack(mark uint64) {
	b.line.Lock()
	defer b.line.Unlock()
	// Under the lock, so that no waiter queues meanwhile and misses it;
	// with a CAS, since lock-free Readies take tokens.
	now := b.now()
	for {
		tat := b.tat.Load()
		if b.tat.CompareAndSwap(tat, int64(b.g.giveBack(time.Duration(tat), time.Duration(mark), now))) {
			break
		}
	}
	b.grant(now)
}
