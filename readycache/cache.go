package readycache

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/option"
)

// ErrClosed is the error of Take on a closed Cache.
var ErrClosed = errors.New("ready cache closed")

// A Picker chooses which ready endpoint a Take takes.
type Picker[S any] interface {
	// Pick returns the index in ready of the endpoint to take. ready
	// holds at least one endpoint, in the cache's order (see [Cache]);
	// Pick must not keep it or change it. Pick is called with the cache's
	// lock held: it must be quick, and must not call the cache.
	Pick(ready []S) int
}

// Cache is a keyed set of endpoints whose readiness is driven in the
// background: tower's ReadyCache, for a model in which readiness is a
// reservation. An endpoint is either ready, holding a permit that its
// Ready returned, or pending, while the cache waits for one. Take hands a
// ready endpoint's permit to the caller.
//
// Readiness is driven by one goroutine per pending endpoint: it waits in
// the endpoint's Ready, and when the permit comes, the endpoint is ready.
// Before starting one, the cache asks the endpoint whether it is ready now
// (Ready with a done context, [tower.ReadyNow]): an endpoint with capacity
// to spare is ready at once and costs no goroutine. It does so when an
// endpoint is pushed, and again as soon as Take has taken its permit; a
// ready endpoint thus holds one reservation at all times, until it is
// taken, evicted or replaced, or the cache is closed.
//
// An endpoint whose Ready fails (with an error that is not its context's)
// is broken for good: it is removed, and reported with its key to the
// failure handler ([WithFailureHandler]) as a *[Failed]. A ready endpoint
// is not watched: if it breaks, that is seen at its next Ready, once its
// permit has been taken.
//
// The ready endpoints are kept in a slice, in the order they became ready;
// an endpoint that stops being ready is swapped with the last one, as in
// tower's ReadyCache. An endpoint that is ready again as soon as it is
// taken keeps its place.
//
// The cache calls an endpoint's Ready with a done context while holding its
// lock: such a call must not wait (the readiness contract says it does
// not), and must not call the cache. Permits are released, and failures
// reported, without the lock.
//
// A Cache is safe for concurrent use. The zero Cache is not usable; make
// one with [New], and Close it when done: no goroutine outlives Close. K is
// the key type, Req and Res the request and response types, and S the
// endpoint type.
type Cache[K comparable, Req, Res any, S tower.Service[Req, Res]] struct {
	onFailure func(*Failed[K])
	onRemove  func(K, S)
	root      context.Context // ended by Close; the parent of every driver's context
	stop      context.CancelFunc
	drivers   sync.WaitGroup

	mu       sync.Mutex
	entries  map[K]*entry[K, Req, Res, S]
	ready    []*entry[K, Req, Res, S] // the ready endpoints, each holding a permit
	readySvc []S                      // ready[i].svc: what a Picker sees
	changed  chan struct{}            // closed at the next change, if watched
	watched  bool
	closed   bool
}

// entry is one endpoint in the cache.
type entry[K comparable, Req, Res any, S tower.Service[Req, Res]] struct {
	key     K
	svc     S
	permit  tower.Permit[Req, Res] // held while ready
	index   int                    // in ready; -1 while pending
	ctx     context.Context        // made when a driver is first needed; ends when the entry leaves
	cancel  context.CancelFunc
	driving bool // a driver is in svc.Ready
	gone    bool // evicted, replaced, failed or closed
}

// An Option configures a Cache. K is the cache's key type.
type Option[K comparable] func(*options[K])

type options[K comparable] struct {
	onFailure func(*Failed[K])
	onRemove  any // a func(K, S), checked by New
}

// WithFailureHandler makes the cache call f with each endpoint it removes
// because its Ready failed. f is called without the cache's lock, on the
// goroutine that saw the failure (a driver, or the caller of Push or Take),
// so it must be safe for concurrent use. By default failures are dropped,
// as tower's ReadyCache does once it has returned them. It panics if f is
// nil.
func WithFailureHandler[K comparable](f func(*Failed[K])) Option[K] {
	if f == nil {
		panic("readycache.WithFailureHandler: nil handler")
	}
	return func(o *options[K]) { o.onFailure = f }
}

// WithRemovalHandler makes the cache call f with each endpoint that leaves
// it: evicted, replaced by a Push of its key, removed because its Ready
// failed (after the failure handler has heard of it), or dropped by Close.
// By then the cache has released the reservation the endpoint held and no
// goroutine of the cache is using it, so f may close it: tower's cache
// drops the service, which in Rust ends it. Permits taken from the endpoint
// before are their callers', and may still be in use.
//
// f is called without the cache's lock, on the goroutine that removed the
// endpoint (Close, Evict or Push's caller, a driver, or a Take that found
// it broken), so it must be safe for concurrent use. S must be the cache's
// endpoint type: New panics if it is not. It panics if f is nil.
func WithRemovalHandler[K comparable, S any](f func(key K, svc S)) Option[K] {
	if f == nil {
		panic("readycache.WithRemovalHandler: nil handler")
	}
	return func(o *options[K]) { o.onRemove = f }
}

// New returns an empty Cache. It panics if an option is nil, or if the
// handler of WithRemovalHandler does not take K and S.
func New[K comparable, Req, Res any, S tower.Service[Req, Res]](opts ...Option[K]) *Cache[K, Req, Res, S] {
	o := option.Apply[options[K]]("readycache.New", opts)
	var onRemove func(K, S)
	if o.onRemove != nil {
		var ok bool
		if onRemove, ok = o.onRemove.(func(K, S)); !ok {
			panic(fmt.Sprintf("readycache.New: the removal handler is a %T, want a %v", o.onRemove, reflect.TypeFor[func(K, S)]()))
		}
	}
	root, stop := context.WithCancel(context.Background())
	return &Cache[K, Req, Res, S]{
		onFailure: o.onFailure,
		onRemove:  onRemove,
		root:      root,
		stop:      stop,
		entries:   make(map[K]*entry[K, Req, Res, S]),
		changed:   make(chan struct{}),
	}
}

// Push adds svc under key, replacing the endpoint that key had: the old one
// is dropped at once, and the reservation it held released. svc is asked
// whether it is ready now; if it is not, a goroutine waits for it. A push
// on a closed cache does nothing. It panics if svc is nil.
func (c *Cache[K, Req, Res, S]) Push(key K, svc S) {
	if isNil(svc) {
		panic("readycache.Cache.Push: nil service")
	}
	old, failed := c.push(key, svc)
	c.finish(old)
	c.finish(failed)
}

// push returns the endpoint key had, and the new one if it is broken.
func (c *Cache[K, Req, Res, S]) push(key K, svc S) (old, failed *removal[K, Req, Res, S]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil
	}
	if e := c.entries[key]; e != nil {
		old = c.removeLocked(e, nil)
	}
	e := &entry[K, Req, Res, S]{key: key, svc: svc, index: -1}
	c.entries[key] = e
	c.notifyLocked()
	return old, c.refillLocked(e)
}

// Evict removes the endpoint under key, releasing the reservation it held
// if it was ready, and stopping the wait for it if it was pending. It
// reports whether there was one.
func (c *Cache[K, Req, Res, S]) Evict(key K) bool {
	c.mu.Lock()
	e := c.entries[key]
	var r *removal[K, Req, Res, S]
	if e != nil {
		r = c.removeLocked(e, nil)
	}
	c.mu.Unlock()
	c.finish(r)
	return e != nil
}

// TryTake takes a ready endpoint's permit, chosen by pick, if an endpoint is
// ready now; otherwise it returns false. The caller owns the permit and must
// call or release it. The endpoint is asked for its next reservation at
// once, and stays ready if it has one.
func (c *Cache[K, Req, Res, S]) TryTake(pick Picker[S]) (key K, p tower.Permit[Req, Res], ok bool) {
	var failed *removal[K, Req, Res, S]
	key, p, ok, failed = c.tryTake(pick)
	c.finish(failed)
	return key, p, ok
}

func (c *Cache[K, Req, Res, S]) tryTake(pick Picker[S]) (key K, p tower.Permit[Req, Res], ok bool, failed *removal[K, Req, Res, S]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.ready)
	if n == 0 {
		return key, p, false, nil
	}
	i := pick.Pick(c.readySvc)
	if i < 0 || i >= n {
		panic(fmt.Sprintf("readycache: Picker returned index %d for %d ready endpoints", i, n))
	}
	e := c.ready[i]
	p, failed = c.takeLocked(e)
	return e.key, p, true, failed
}

// TakeKey takes the permit of the endpoint under key, if it is ready now,
// as TryTake does. It returns false if key is pending or not in the cache.
func (c *Cache[K, Req, Res, S]) TakeKey(key K) (tower.Permit[Req, Res], bool) {
	p, ok, failed := c.takeKey(key)
	c.finish(failed)
	return p, ok
}

func (c *Cache[K, Req, Res, S]) takeKey(key K) (p tower.Permit[Req, Res], ok bool, failed *removal[K, Req, Res, S]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if e == nil || e.index < 0 {
		return p, false, nil
	}
	p, failed = c.takeLocked(e)
	return p, true, failed
}

// Take waits until an endpoint is ready and takes its permit, chosen by
// pick, as TryTake does. If ctx ends first, it returns ctx.Err() unchanged;
// a ready endpoint is taken even if ctx is already done. It returns
// ErrClosed once the cache is closed.
func (c *Cache[K, Req, Res, S]) Take(ctx context.Context, pick Picker[S]) (K, tower.Permit[Req, Res], error) {
	for {
		if k, p, ok := c.TryTake(pick); ok {
			return k, p, nil
		}
		changed := c.Changed()
		if k, p, ok := c.TryTake(pick); ok {
			return k, p, nil
		}
		if c.Closed() {
			var zero K
			return zero, tower.Permit[Req, Res]{}, ErrClosed
		}
		select {
		case <-changed:
		case <-ctx.Done():
			var zero K
			return zero, tower.Permit[Req, Res]{}, ctx.Err()
		}
	}
}

// Changed returns a channel that is closed at the cache's next change: an
// endpoint pushed, becoming ready, evicted or removed, or the cache closed.
// Wait on it after a TryTake that found nothing, asking for it before
// trying again so that no change is missed. On a closed cache, the channel
// is closed already.
func (c *Cache[K, Req, Res, S]) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watched = true
	return c.changed
}

// Len returns the number of endpoints in the cache, ready or pending.
func (c *Cache[K, Req, Res, S]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// ReadyLen returns the number of ready endpoints.
func (c *Cache[K, Req, Res, S]) ReadyLen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ready)
}

// PendingLen returns the number of endpoints waited for.
func (c *Cache[K, Req, Res, S]) PendingLen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries) - len(c.ready)
}

// Contains reports whether key is in the cache, ready or pending.
func (c *Cache[K, Req, Res, S]) Contains(key K) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[key] != nil
}

// IsReady reports whether the endpoint under key is ready.
func (c *Cache[K, Req, Res, S]) IsReady(key K) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	return e != nil && e.index >= 0
}

// Closed reports whether Close has been called.
func (c *Cache[K, Req, Res, S]) Closed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Close empties the cache: it releases the reservations of the ready
// endpoints, stops the goroutines waiting for the pending ones and waits
// for them to exit, and wakes every Take with ErrClosed. Permits already
// taken stay valid: they belong to their callers. Close is idempotent and
// returns nil.
func (c *Cache[K, Req, Res, S]) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	removed := make([]*removal[K, Req, Res, S], 0, len(c.entries))
	for _, e := range c.entries {
		removed = append(removed, c.removeLocked(e, nil))
	}
	close(c.changed) // whether watched or not: Changed returns it from now on
	c.mu.Unlock()
	c.stop()
	for _, r := range removed {
		c.finish(r)
	}
	c.drivers.Wait() // each tells onRemove of its own endpoint
	return nil
}

// A removal is an endpoint that has left the cache, with what its remover
// must do once it has let go of the lock: release the reservation the
// endpoint held, report its failure, and then tell the removal handler.
// Removals are rare, so they are allocated: the paths that take a permit
// pass a nil one.
type removal[K comparable, Req, Res any, S tower.Service[Req, Res]] struct {
	e      *entry[K, Req, Res, S]
	held   tower.Permit[Req, Res]
	failed *Failed[K]
	tell   bool // no driver is in e's Ready: that one would tell the handler
}

// finish does what r, if not nil, left to do, without the lock.
func (c *Cache[K, Req, Res, S]) finish(r *removal[K, Req, Res, S]) {
	if r != nil {
		c.finishRemoval(r)
	}
}

func (c *Cache[K, Req, Res, S]) finishRemoval(r *removal[K, Req, Res, S]) {
	r.held.Release()
	c.report(r.failed)
	if r.tell && c.onRemove != nil {
		c.onRemove(r.e.key, r.e.svc)
	}
}

func (c *Cache[K, Req, Res, S]) report(f *Failed[K]) {
	if f != nil && c.onFailure != nil {
		c.onFailure(f)
	}
}
