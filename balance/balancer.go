package balance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync/atomic"

	"github.com/towergo/tower"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/readycache"
)

// balancer is what P2C and RoundRobin share, methods included: a ready
// cache fed by a Discover, and a Ready that takes what the picker chooses.
type balancer[K comparable, Req, Res any, S tower.Service[Req, Res]] struct {
	cache    *readycache.Cache[K, Req, Res, S]
	pick     readycache.Picker[S]
	o        options
	wrap     func(K, S) S // wraps an endpoint for outlier detection; nil without
	detector *detector[K] // the outlier detection; nil without

	answered   atomic.Bool   // the Discover has answered once
	answeredCh chan struct{} // closed when answered is set
	closed     atomic.Bool
	stop       context.CancelFunc // ends the consumer's context
	done       chan struct{}      // closed when the consumer has exited
}

// doneCtx is a context that is already done, to ask the Discover for the
// changes it has now.
var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// init sets b up over d: it applies the changes d has now, so that a static
// list is in place when the constructor returns, and starts the goroutine
// that applies the rest.
func (b *balancer[K, Req, Res, S]) init(fn string, d discover.Discover[K, S], pick readycache.Picker[S], opts []Option) {
	if isnil.Is(d) {
		panic(fn + ": nil Discover")
	}
	b.o = options{rand: globalRand{}}
	option.Onto(fn, &b.o, opts)
	b.pick = pick
	b.answeredCh = make(chan struct{})
	b.done = make(chan struct{})
	cacheOpts := []readycache.Option[K]{readycache.WithFailureHandler(func(f *readycache.Failed[K]) {
		b.report(f)
	})}
	var onRemove func(K, S)
	if b.o.onRemove != nil {
		var ok bool
		if onRemove, ok = b.o.onRemove.(func(K, S)); !ok {
			panic(fmt.Sprintf("%s: the removal handler is a %T, want a %v", fn, b.o.onRemove, reflect.TypeFor[func(K, S)]()))
		}
	}
	if b.o.outlier != nil {
		onRemove = b.initOutlier(fn, onRemove)
	}
	if onRemove != nil {
		cacheOpts = append(cacheOpts, readycache.WithRemovalHandler(onRemove))
	}
	b.cache = readycache.New[K, Req, Res, S](cacheOpts...)
	more := false
	guard.Undo(func() { more = b.takeIn(d) }, func() { b.cache.Close() })
	ctx, stop := context.WithCancel(context.Background())
	b.stop = stop
	if more {
		go b.consume(ctx, d)
	} else {
		close(b.done) // the set is final: no goroutine needed
	}
}

// takeIn applies the changes d has now, and reports whether it may have
// more.
func (b *balancer[K, Req, Res, S]) takeIn(d discover.Discover[K, S]) bool {
	for {
		ch, err := d.Next(doneCtx)
		if errors.Is(err, context.Canceled) {
			return true
		}
		if !b.apply(ch, err) {
			return false
		}
		if err != nil {
			return true // a report: retrying is the goroutine's business
		}
	}
}

// apply applies one answer of the Discover, and reports whether to ask for
// more.
func (b *balancer[K, Req, Res, S]) apply(ch discover.Change[K, S], err error) bool {
	defer b.answer() // after the change, so that a fail-fast Ready sees it
	switch {
	case errors.Is(err, io.EOF):
		return false
	case err != nil:
		b.report(&DiscoverError{Err: err})
	case ch.Kind == discover.Insert && isnil.Is(ch.Service):
		b.report(&DiscoverError{Err: fmt.Errorf("insert of key %v with a nil service", ch.Key)})
	case ch.Kind == discover.Insert && b.wrap != nil:
		b.cache.Push(ch.Key, b.wrap(ch.Key, ch.Service))
	case ch.Kind == discover.Insert:
		b.cache.Push(ch.Key, ch.Service)
	case ch.Kind == discover.Remove:
		b.cache.Evict(ch.Key)
	default:
		b.report(&DiscoverError{Err: fmt.Errorf("change of key %v has unknown kind %v", ch.Key, ch.Kind)})
	}
	return true
}

func (b *balancer[K, Req, Res, S]) answer() {
	if !b.answered.Swap(true) {
		close(b.answeredCh)
	}
}

// report logs err and hands it to the error handler, if there are any.
func (b *balancer[K, Req, Res, S]) report(err error) {
	logReport[K](b.o.log, err)
	if b.o.onError != nil {
		b.o.onError(err)
	}
}

// Ready waits until an endpoint is ready, and returns the permit of the one
// the balancer picks, as the tower contract says for ctx. It fails only
// with ctx's error, or with ErrClosed once the balancer is closed; a panic
// in an endpoint's Load or the Rand goes up with nothing taken. Built
// WithFailFast, a balancer with no endpoints returns at once a permit whose
// Call fails with ErrNoEndpoints.
func (b *balancer[K, Req, Res, S]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	tried, _ := ctx.Value(triedKey{}).(*Tried[K])
	if p, ok := b.tryTake(tried); ok {
		return p, nil
	}
	for {
		changed := b.cache.Changed()
		if p, ok := b.tryTake(tried); ok {
			return p, nil
		}
		if b.closed.Load() {
			return tower.Permit[Req, Res]{}, ErrClosed
		}
		var answered <-chan struct{}
		if b.o.failFast {
			if !b.answered.Load() {
				answered = b.answeredCh
			} else if b.cache.Len() == 0 {
				return tower.NewPermit[Req, Res](noEndpoints[Req, Res]{}, 0), nil
			}
		}
		select {
		case <-changed:
		case <-answered:
		case <-ctx.Done():
			return tower.Permit[Req, Res]{}, ctx.Err()
		}
	}
}

// tryTake takes the permit of the endpoint the picker chooses, if one is
// ready: one not in tried, if tried has one, and records it there.
func (b *balancer[K, Req, Res, S]) tryTake(tried *Tried[K]) (tower.Permit[Req, Res], bool) {
	if tried == nil {
		_, p, ok := b.cache.TryTake(b.pick)
		return p, ok
	}
	key, p, ok := b.cache.TryTakeExcept(b.pick, tried.has)
	if ok {
		tried.add(key)
	}
	return p, ok
}

// noEndpoints serves the permits of requests failed fast.
type noEndpoints[Req, Res any] struct{}

func (noEndpoints[Req, Res]) CallReserved(context.Context, uint64, Req) (Res, error) {
	var zero Res
	return zero, ErrNoEndpoints
}

func (noEndpoints[Req, Res]) ReleaseReserved(uint64) {}

// Len returns the number of endpoints, ready or not.
func (b *balancer[K, Req, Res, S]) Len() int { return b.cache.Len() }

// ReadyLen returns the number of endpoints ready now.
func (b *balancer[K, Req, Res, S]) ReadyLen() int { return b.cache.ReadyLen() }

// Close stops the discovery, releases the ready endpoints' reservations,
// and stops and waits for the balancer's goroutines, however long a
// Discover's Next or an endpoint's Ready takes to return. Ready fails with
// ErrClosed from then on; permits already returned stay good. Close is
// idempotent and returns nil.
func (b *balancer[K, Req, Res, S]) Close() error { return b.Shutdown(context.Background()) }

// Shutdown does what Close does, but waits for the balancer's goroutines
// only as long as ctx lasts: it returns nil once they have all exited, or
// ctx.Err() if ctx ends first. Each one left exits when the Next or Ready
// it is in returns, releasing what it got and handing any endpoint it got
// to the removal handler; call Shutdown or Close again to wait for them.
// Whatever ctx says, the first call releases the ready endpoints'
// reservations and calls the removal handler for them before it waits.
func (b *balancer[K, Req, Res, S]) Shutdown(ctx context.Context) error {
	// The cache is closed without waiting for the consumer, which may be in
	// a Next that ignores its context: an endpoint it inserts into the
	// closed cache goes straight to the removal handler.
	b.closed.Store(true) // before the cache wakes those waiting in Ready
	b.stop()
	var evaluating <-chan struct{}
	if b.detector != nil {
		evaluating = b.detector.close()
	}
	if err := b.cache.Shutdown(ctx); err != nil {
		return err
	}
	if err := wait(ctx, evaluating); err != nil {
		return err
	}
	return wait(ctx, b.done)
}

// wait waits, as long as ctx lasts, until ch, if not nil, is closed.
func wait(ctx context.Context, ch <-chan struct{}) error {
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	default:
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
