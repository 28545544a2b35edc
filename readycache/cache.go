package readycache

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/option"
)

// ErrClosed is the error of Take on a closed Cache.
var ErrClosed = errors.New("ready cache closed")

// Failed reports, to [WithFailureHandler], an endpoint that the cache
// removed because its Ready failed: tower's ready_cache::error::Failed,
// with the endpoint's error's message. K is the key type.
type Failed[K comparable] struct {
	Key K     // the key the endpoint was under
	Err error // what its Ready returned, or the PanicError of its panic
}

// Error returns the endpoint's error's message.
func (f *Failed[K]) Error() string { return f.Err.Error() }

// Unwrap returns the endpoint's error.
func (f *Failed[K]) Unwrap() error { return f.Err }

// A Picker chooses which ready endpoint a Take takes.
type Picker[S any] interface {
	// Pick returns the index in ready of the endpoint to take. ready
	// holds at least one endpoint, in the cache's order (see [Cache]);
	// Pick must not keep it or change it. Pick is called with the cache's
	// lock held: it must be quick, and must not call the cache.
	Pick(ready []S) int
}

// Cache is a keyed set of endpoints whose readiness is driven in the
// background; see the package doc.
//
// The ready endpoints are kept in the order they became ready; one that
// stops being ready is swapped with the last, as in tower's ReadyCache,
// and one that is ready again as soon as it is taken keeps its place.
// The cache calls an endpoint's Ready with a done context while holding
// its lock, so such a call must not call the cache. Permits are released,
// and handlers called, without the lock.
//
// A Cache is safe for concurrent use. The zero Cache is not usable; make
// one with [New], and Close (or Shutdown) it when done: no goroutine
// outlives Close. K is the key type, Req and Res the request and response
// types, and S the endpoint type.
type Cache[K comparable, Req, Res any, S tower.Service[Req, Res]] struct {
	onFailure func(*Failed[K])
	onRemove  func(K, S)
	root      context.Context // ended by Close; the parent of every driver's context
	stop      context.CancelFunc
	stopped   chan struct{} // closed once closed, with no driver left

	mu       sync.Mutex
	entries  map[K]*entry[K, Req, Res, S]
	ready    []*entry[K, Req, Res, S] // the ready endpoints, each holding a permit
	readySvc []S                      // ready[i].svc: what a Picker sees
	changed  chan struct{}            // closed at the next change, if watched
	watched  bool
	closed   bool
	drivers  int // goroutines running drive
}

type entry[K comparable, Req, Res any, S tower.Service[Req, Res]] struct {
	key     K
	svc     S
	permit  tower.Permit[Req, Res] // held while ready
	index   int                    // in ready; -1 while pending
	ctx     context.Context        // the drivers'; ends when the entry leaves
	cancel  context.CancelFunc
	driving bool // a driver is in svc.Ready
	repoll  bool // Repoll was called while driving: ask again once Ready returns
	gone    bool // evicted, replaced, failed or closed
}

// An Option configures a Cache. K is the cache's key type.
type Option[K comparable] func(*options[K])

type options[K comparable] struct {
	onFailure func(*Failed[K])
	onRemove  any // a func(K, S), checked by New
}

// WithFailureHandler makes the cache call f with each endpoint it removes
// because its Ready failed or panicked. f is called on the goroutine that
// saw the failure (a driver, or the caller of Push, Take or Repoll), so it
// must be safe for concurrent use. By default failures are dropped. It
// panics if f is nil.
func WithFailureHandler[K comparable](f func(*Failed[K])) Option[K] {
	option.PanicIf(f == nil, "readycache.WithFailureHandler: nil handler")
	return func(o *options[K]) { o.onFailure = f }
}

// WithRemovalHandler makes the cache call f with each endpoint that leaves
// it: evicted, replaced by a Push of its key, removed because its Ready
// failed (after the failure handler), dropped by Close, or pushed on a
// closed cache. By then the cache has released the endpoint's reservation
// and no goroutine of the cache uses it, so f may close it; permits taken
// from it before are their callers', and may still be in use. f is called
// without the cache's lock, on the goroutine that removed the endpoint (a
// caller or a driver), so it must be safe for concurrent use. S must be
// the cache's endpoint type: New panics if it is not. It panics if f is
// nil.
func WithRemovalHandler[K comparable, S any](f func(key K, svc S)) Option[K] {
	option.PanicIf(f == nil, "readycache.WithRemovalHandler: nil handler")
	return func(o *options[K]) { o.onRemove = f }
}

// New returns an empty Cache. It panics if an option is nil, or if the
// handler of WithRemovalHandler does not take K and S.
func New[K comparable, Req, Res any, S tower.Service[Req, Res]](opts ...Option[K]) *Cache[K, Req, Res, S] {
	o := option.Apply[options[K]]("readycache.New", opts)
	onRemove, ok := o.onRemove.(func(K, S))
	option.PanicIf(!ok && o.onRemove != nil, "readycache.New: the removal handler is a %T, want a %v", o.onRemove, reflect.TypeFor[func(K, S)]())
	root, stop := context.WithCancel(context.Background())
	return &Cache[K, Req, Res, S]{
		onFailure: o.onFailure,
		onRemove:  onRemove,
		root:      root,
		stop:      stop,
		stopped:   make(chan struct{}),
		entries:   make(map[K]*entry[K, Req, Res, S]),
		changed:   make(chan struct{}),
	}
}

// Push adds svc under key, replacing the endpoint that key had: the old one
// is dropped at once, and the reservation it held released. A push on a
// closed cache hands svc straight to the removal handler. It panics if svc
// is nil, or holds a nil pointer.
func (c *Cache[K, Req, Res, S]) Push(key K, svc S) {
	option.PanicIf(isnil.Is(svc), "readycache.Cache.Push: nil service")
	old, failed := c.push(key, svc)
	defer c.finish(failed) // even if a handler of old's panics
	c.finish(old)
}

// push returns the removals of the endpoint key had, and of svc if it is
// broken or the cache closed.
func (c *Cache[K, Req, Res, S]) push(key K, svc S) (old, failed *removal[K, Req, Res, S]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, &removal[K, Req, Res, S]{e: &entry[K, Req, Res, S]{key: key, svc: svc}, tell: true}
	}
	if e := c.entries[key]; e != nil {
		old = c.removeLocked(e, nil)
	}
	e := &entry[K, Req, Res, S]{key: key, svc: svc, index: -1}
	e.ctx, e.cancel = context.WithCancel(c.root)
	c.entries[key] = e
	c.notifyLocked()
	return old, c.refillLocked(e, tower.Permit[Req, Res]{})
}

// Evict removes the endpoint under key, releasing the reservation it held
// if it was ready, and cancelling the context its driver's Ready was given
// if it was pending. It reports whether there was one. The removal handler
// is called on Evict's goroutine, or by the driver once Ready has returned.
func (c *Cache[K, Req, Res, S]) Evict(key K) bool {
	r := c.evict(key)
	c.finish(r)
	return r != nil
}

// evict's deferred unlock matters: looking up an interface key that holds
// a slice panics.
func (c *Cache[K, Req, Res, S]) evict(key K) *removal[K, Req, Res, S] {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[key]; e != nil {
		return c.removeLocked(e, nil)
	}
	return nil
}

// TryTake takes the permit of a ready endpoint chosen by pick, if one is
// ready now; otherwise it returns false. The caller owns the permit and
// must call or release it, even if the endpoint turns out broken when
// asked at once for its next reservation.
func (c *Cache[K, Req, Res, S]) TryTake(pick Picker[S]) (key K, p tower.Permit[Req, Res], ok bool) {
	return c.TryTakeExcept(pick, nil)
}

// TryTakeExcept is TryTake, but an endpoint whose key except reports is
// taken only if no other is ready: pick then chooses among the others, in
// the cache's order. This sends a retry to an endpoint its request has not
// tried. except is called with the cache's lock held: it must be quick and
// must not call the cache. A nil except excepts none.
func (c *Cache[K, Req, Res, S]) TryTakeExcept(pick Picker[S], except func(K) bool) (key K, p tower.Permit[Req, Res], ok bool) {
	key, p, ok, failed := c.tryTake(pick, except)
	if failed != nil {
		c.finishTaken(failed, p)
	}
	return key, p, ok
}

func (c *Cache[K, Req, Res, S]) tryTake(pick Picker[S], except func(K) bool) (key K, p tower.Permit[Req, Res], ok bool, failed *removal[K, Req, Res, S]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.ready)
	if n == 0 {
		return key, p, false, nil
	}
	i := checkPick(pick.Pick(c.readySvc), n)
	if except != nil && except(c.ready[i].key) {
		i = c.pickExceptLocked(pick, except, i)
	}
	e := c.ready[i]
	p, failed = c.takeLocked(e)
	return e.key, p, true, failed
}

// pickExceptLocked returns the index of the ready endpoint pick chooses
// among those except does not report, or first if there is none.
func (c *Cache[K, Req, Res, S]) pickExceptLocked(pick Picker[S], except func(K) bool, first int) int {
	var idx []int
	var svcs []S
	for j, e := range c.ready {
		if !except(e.key) {
			idx, svcs = append(idx, j), append(svcs, c.readySvc[j])
		}
	}
	if len(idx) == 0 {
		return first
	}
	return idx[checkPick(pick.Pick(svcs), len(idx))]
}

func checkPick(i, n int) int {
	if i < 0 || i >= n {
		panic(fmt.Sprintf("readycache: Picker returned index %d for %d ready endpoints", i, n))
	}
	return i
}

// TakeKey takes the permit of the endpoint under key, if it is ready now,
// as TryTake does. It returns false if key is pending or not in the cache.
func (c *Cache[K, Req, Res, S]) TakeKey(key K) (tower.Permit[Req, Res], bool) {
	p, ok, failed := c.takeKey(key)
	if failed != nil {
		c.finishTaken(failed, p)
	}
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

// Take waits until an endpoint is ready and takes its permit, as TryTake
// does. If ctx ends first, it returns ctx.Err(); a ready endpoint is taken
// even if ctx is already done. It returns ErrClosed once the cache is
// closed.
func (c *Cache[K, Req, Res, S]) Take(ctx context.Context, pick Picker[S]) (K, tower.Permit[Req, Res], error) {
	for {
		if k, p, ok := c.TryTake(pick); ok {
			return k, p, nil
		}
		changed := c.Changed()
		k, p, ok := c.TryTake(pick)
		if ok {
			return k, p, nil
		}
		if c.Closed() {
			return k, p, ErrClosed
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return k, p, ctx.Err()
		}
	}
}

// Changed returns a channel that is closed at the cache's next change: an
// endpoint pushed, becoming ready, evicted or removed, or the cache closed
// (then the channel is closed already). To wait after a TryTake that found
// nothing, get the channel, TryTake again, then wait.
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
