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

// balancer is what P2C and RoundRobin share, methods included.
type balancer[K comparable, Req, Res any, S tower.Service[Req, Res]] struct {
	cache    *readycache.Cache[K, Req, Res, S]
	pick     readycache.Picker[S]
	o        options
	wrap     func(K, S) S // what the cache gets for an endpoint inserted
	detector *detector[K] // nil without outlier detection

	answered   atomic.Bool        // the Discover has answered once
	answeredCh chan struct{}      // closed when answered is set
	stop       context.CancelFunc // ends the consumer's context
	done       chan struct{}      // closed when the consumer has exited
}

// doneCtx asks a Discover for the changes it has now.
var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// init applies the changes d has now, so that a static list is in place
// when the constructor returns, and starts the goroutine that applies the
// rest.
func (b *balancer[K, Req, Res, S]) init(fn string, d discover.Discover[K, S], pick readycache.Picker[S], opts []Option) {
	option.PanicIf(isnil.Is(d), "%s: nil Discover", fn)
	b.o = options{rand: globalRand{}}
	option.Onto(fn, &b.o, opts)
	b.pick = pick
	b.answeredCh = make(chan struct{})
	b.done = make(chan struct{})
	onRemove := as[func(K, S)](fn, "removal handler", b.o.onRemove)
	b.wrap = func(_ K, s S) S { return s }
	if b.o.outlier != nil {
		onRemove = b.initOutlier(fn, onRemove)
	}
	cacheOpts := []readycache.Option[K]{readycache.WithFailureHandler(func(f *readycache.Failed[K]) { b.report(f) })}
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

// as returns v, nil or the func an option gave for a type parameter of
// the balancer's, as an F, or panics naming fn and what.
func as[F any](fn, what string, v any) F {
	f, ok := v.(F)
	option.PanicIf(!ok && v != nil, "%s: the %s is a %T, want a %v", fn, what, v, reflect.TypeFor[F]())
	return f
}

// takeIn applies the changes d has now, and reports whether it may have more.
func (b *balancer[K, Req, Res, S]) takeIn(d discover.Discover[K, S]) bool {
	for {
		ch, err := d.Next(doneCtx)
		if errors.Is(err, context.Canceled) {
			return true
		}
		if more := b.apply(ch, err); !more || err != nil {
			return more // after a report, retrying is the goroutine's business
		}
	}
}

// apply applies an answer of the Discover, and reports whether to ask more.
func (b *balancer[K, Req, Res, S]) apply(ch discover.Change[K, S], err error) bool {
	defer b.answer() // after the change, so that a fail-fast Ready sees it
	switch {
	case errors.Is(err, io.EOF):
		return false
	case err != nil:
		b.report(&DiscoverError{Err: err})
	case ch.Kind == discover.Insert && isnil.Is(ch.Service):
		b.report(&DiscoverError{Err: fmt.Errorf("insert of key %v with a nil service", ch.Key)})
	case ch.Kind == discover.Insert:
		b.cache.Push(ch.Key, b.wrap(ch.Key, ch.Service))
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

// report logs err and hands it to the error handler, if any.
func (b *balancer[K, Req, Res, S]) report(err error) {
	logReport[K](b.o.log, err)
	if b.o.onError != nil {
		b.o.onError(err)
	}
}

// Ready waits until an endpoint is ready, and returns the permit of the one
// the balancer picks, as the tower contract says for ctx. It fails only
// with ctx's error, or with ErrClosed once the balancer is closed; see
// also [WithFailFast].
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
		if b.cache.Closed() {
			return tower.Permit[Req, Res]{}, ErrClosed
		}
		var answered <-chan struct{}
		if b.o.failFast {
			if !b.answered.Load() {
				answered = b.answeredCh
			} else if b.cache.Len() == 0 {
				return tower.ServiceFunc[Req, Res](noEndpoints[Req, Res]).Ready(ctx)
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

// noEndpoints serves the requests failed fast.
func noEndpoints[Req, Res any](context.Context, Req) (Res, error) {
	var zero Res
	return zero, ErrNoEndpoints
}

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
	b.stop()
	evaluating := doneCtx.Done()
	if b.detector != nil {
		evaluating = b.detector.close()
	}
	if err := b.cache.Shutdown(ctx); err != nil {
		return err
	}
	return wait(ctx, evaluating, b.done)
}

// wait waits, as long as ctx lasts, until each of chs is closed; one
// closed counts even if ctx is done.
func wait(ctx context.Context, chs ...<-chan struct{}) error {
	for _, ch := range chs {
		select {
		case <-ch:
		case <-ctx.Done():
			select {
			case <-ch:
			default:
				return ctx.Err()
			}
		}
	}
	return nil
}
