package balance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/towergo/tower"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/readycache"
)

// balancer is what P2C and RoundRobin share: a ready cache fed by a
// Discover, and a Ready that takes what the picker chooses.
type balancer[K comparable, Req, Res any, S tower.Service[Req, Res]] struct {
	cache *readycache.Cache[K, Req, Res, S]
	pick  readycache.Picker[S]
	o     options

	answered   atomic.Bool   // the Discover has answered once
	answeredCh chan struct{} // closed when answered is set
	closed     atomic.Bool
	stop       context.CancelFunc
	done       chan struct{} // closed when the consumer has exited
	closeOnce  sync.Once
}

// doneCtx is a context that is already done, to ask the Discover for the
// changes it has now.
var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// init sets b up over d: it applies the changes d has now, synchronously, so
// that a static list is in place when the constructor returns, and starts
// the goroutine that applies the rest.
func (b *balancer[K, Req, Res, S]) init(fn string, d discover.Discover[K, S], pick readycache.Picker[S], opts []Option) {
	if isNil(d) {
		panic(fn + ": nil Discover")
	}
	b.o = newOptions(fn, opts)
	b.pick = pick
	b.answeredCh = make(chan struct{})
	b.done = make(chan struct{})
	cacheOpts := []readycache.Option[K]{readycache.WithFailureHandler(func(f *readycache.Failed[K]) {
		b.report(f)
	})}
	if b.o.onRemove != nil {
		onRemove, ok := b.o.onRemove.(func(K, S))
		if !ok {
			panic(fmt.Sprintf("%s: the removal handler is a %T, want a %v", fn, b.o.onRemove, reflect.TypeFor[func(K, S)]()))
		}
		cacheOpts = append(cacheOpts, readycache.WithRemovalHandler(onRemove))
	}
	b.cache = readycache.New[K, Req, Res, S](cacheOpts...)
	for {
		ch, err := d.Next(doneCtx)
		if errors.Is(err, context.Canceled) {
			break
		}
		if !b.apply(ch, err) {
			close(b.done) // the set is final: no goroutine needed
			b.stop = func() {}
			return
		}
		if err != nil {
			break // a report: retrying is the goroutine's business
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	b.stop = stop
	go b.consume(ctx, d)
}

// consume applies d's changes until d ends or the balancer is closed.
func (b *balancer[K, Req, Res, S]) consume(ctx context.Context, d discover.Discover[K, S]) {
	defer close(b.done)
	for {
		ch, err := d.Next(ctx)
		if ctx.Err() != nil {
			return
		}
		if !b.apply(ch, err) {
			return
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
	case ch.Kind == discover.Insert && isNil(ch.Service):
		b.report(&DiscoverError{Err: fmt.Errorf("insert of key %v with a nil service", ch.Key)})
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

func (b *balancer[K, Req, Res, S]) report(err error) {
	if b.o.onError != nil {
		b.o.onError(err)
	}
}

// ready takes a ready endpoint's permit, waiting for one if need be.
func (b *balancer[K, Req, Res, S]) ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	if _, p, ok := b.cache.TryTake(b.pick); ok {
		return p, nil
	}
	for {
		changed := b.cache.Changed()
		if _, p, ok := b.cache.TryTake(b.pick); ok {
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

// noEndpoints serves the permits of requests failed fast. It holds nothing.
type noEndpoints[Req, Res any] struct{}

func (noEndpoints[Req, Res]) CallReserved(context.Context, uint64, Req) (Res, error) {
	var zero Res
	return zero, ErrNoEndpoints
}

func (noEndpoints[Req, Res]) ReleaseReserved(uint64) {}

// close stops the consumer, then empties the cache.
func (b *balancer[K, Req, Res, S]) close() error {
	b.closeOnce.Do(func() {
		b.closed.Store(true)
		b.stop()
		<-b.done
		b.cache.Close()
	})
	return nil
}

// isNil reports whether v is a nil interface, or holds a nil pointer, map,
// slice, channel or func: no service at all.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}
