package limit

import (
	"context"
	"fmt"
	"hash/maphash"
	"runtime"
	"sync"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/isnil"
	"github.com/towergo/tower/internal/mono"
	"github.com/towergo/tower/internal/option"
	"github.com/towergo/tower/metrics"
)

// Keyed is middleware that limits each key drawn from the requests (a
// tenant, a client's address) to num requests per period with bursts of up
// to burst: a token bucket per key, as in [Bucket], full when the key is
// first seen. Keys never share tokens.
//
// The key is in the request, so Ready is the inner service's Ready, and
// the key's limit is applied in Call: with a token there, even if ctx is
// done, the call goes on; without one, Call fails at once with a
// [*KeyLimitError] and gives the inner permit back, or, with
// [WithMaxWait], waits for the key's next token.
//
// A key whose bucket is full again is the same as one never seen, so each
// request deletes a few such keys; [WithMaxKeys] bounds the rest. A held
// key keeps its value alive: a key function that slices a big buffer
// should strings.Clone its result. A NaN key is never held, so each of its
// requests is a new key.
//
// A Keyed is safe for concurrent use; a request whose key is held
// allocates nothing. Build one with [NewKeyed]. K is the key's type.
type Keyed[Req, Res any, K comparable] struct {
	inner   tower.Service[Req, Res]
	key     func(Req) K
	g       gcra
	maxWait time.Duration
	sink    metrics.Sink // nil: no metrics
	seed    maphash.Seed
	mask    uint64 // len(shards)-1; 0 for one shard, which needs no hash
	shards  []keyShard[K]
	pool    tower.WrapPool[Req, Res]
}

// DefaultMaxKeys is the number of keys a [Keyed] holds at most unless
// [WithMaxKeys] says otherwise.
const DefaultMaxKeys = 100_000

const (
	sweepStep    = 2   // entries each request checks for full buckets
	evictScan    = 8   // entries a new key in a full shard picks a victim from
	maxShards    = 64  // see shardCount
	minShardKeys = 256 // so that a victim is not picked among a handful
)

// A KeyedOption configures a [Keyed].
type KeyedOption func(*keyedOptions)

type keyedOptions struct {
	maxKeys int
	maxWait time.Duration
	sink    metrics.Sink
}

// WithMaxKeys sets the most keys a [Keyed] holds at once (default
// [DefaultMaxKeys]). At the cap a new key still gets in with its full
// burst, and of the next few keys held the one nearest full is dropped,
// forgiven what it still owed, so that a flood of distinct keys cannot
// lock new clients out. The table's memory grows to the cap's worth and is
// not given back. It panics if n is below 1.
func WithMaxKeys(n int) KeyedOption {
	option.PanicIf(n < 1, "limit.WithMaxKeys: n must be at least 1, got %d", n)
	return func(o *keyedOptions) { o.maxKeys = n }
}

// WithMaxWait lets a [Keyed]'s Call wait up to d for its key's next token
// rather than fail at once (default 0: fail at once). Call reserves the
// token if it comes within d and before ctx's deadline, and otherwise
// fails at once with a [*KeyLimitError], reserving nothing. If ctx ends
// during the wait, Call returns ctx.Err() and the token goes back unless
// the key reserved another after it.
//
// The wait holds the inner permit (see the package doc's Placement): keep
// d short. It panics if d is negative.
func WithMaxWait(d time.Duration) KeyedOption {
	option.PanicIf(d < 0, "limit.WithMaxWait: d must not be negative, got %v", d)
	return func(o *keyedOptions) { o.maxWait = d }
}

// WithKeyedMetrics makes a [Keyed] report to sink: Throttled +1 for each
// Call refused with a [*KeyLimitError], and Waiting +1 and -1 around a
// Call's wait for its key's token. A panic in sink goes up to the caller
// of Call, with what it held given back. The default, and a nil sink, is
// no metrics.
func WithKeyedMetrics(sink metrics.Sink) KeyedOption {
	return func(o *keyedOptions) { o.sink = sink }
}

// NewKeyed returns inner wrapped in a [Keyed] of num requests per period,
// with bursts of up to burst, for each key that key draws from a request.
// key is called once per Call, on the caller's goroutine, without a lock;
// a panic in it goes up to the caller, and the inner permit is given back.
// It panics as [NewBucket] does, and if key is nil.
func NewKeyed[Req, Res any, K comparable](inner tower.Service[Req, Res], key func(Req) K, num int, per time.Duration, burst int, opts ...KeyedOption) *Keyed[Req, Res, K] {
	const fn = "limit.NewKeyed"
	if isnil.Is(inner) {
		panic(fn + ": inner is nil")
	}
	g, o := keyedConfig(fn, key, num, per, burst, opts)
	n := shardCount(o.maxKeys)
	k := &Keyed[Req, Res, K]{
		inner: inner, key: key, g: g, maxWait: o.maxWait, sink: o.sink,
		seed: maphash.MakeSeed(), mask: uint64(n - 1), shards: make([]keyShard[K], n),
	}
	for i := range k.shards {
		// The remainder of the cap goes to the first shards.
		k.shards[i] = keyShard[K]{index: map[K]int{}, max: o.maxKeys / n}
		if i < o.maxKeys%n {
			k.shards[i].max++
		}
	}
	return k
}

// NewKeyedLayer returns a Layer that wraps each service in a [Keyed] of
// its own, with key, num, per, burst and opts. It panics as [NewKeyed]
// does.
func NewKeyedLayer[Req, Res any, K comparable](key func(Req) K, num int, per time.Duration, burst int, opts ...KeyedOption) tower.Layer[Req, Res] {
	keyedConfig("limit.NewKeyedLayer", key, num, per, burst, opts)
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return NewKeyed(inner, key, num, per, burst, opts...)
	})
}

func keyedConfig[Req any, K comparable](fn string, key func(Req) K, num int, per time.Duration, burst int, opts []KeyedOption) (gcra, keyedOptions) {
	if key == nil {
		panic(fn + ": key is nil")
	}
	g := newGCRA(fn, num, per, burst)
	o := keyedOptions{maxKeys: DefaultMaxKeys}
	option.Onto(fn, &o, opts)
	return g, o
}

// shardCount is a power of two: up to 4 per processor, but at most
// maxShards, and each with a share of at least minShardKeys of the cap.
func shardCount(maxKeys int) int {
	n := 1
	for n < 4*runtime.GOMAXPROCS(0) && n < maxShards && maxKeys/(2*n) >= minShardKeys {
		n *= 2
	}
	return n
}

// Len returns the number of keys held now, at most the cap, counted shard
// by shard while requests go on.
func (k *Keyed[Req, Res, K]) Len() int {
	n := 0
	for i := range k.shards {
		s := &k.shards[i]
		s.mu.Lock()
		n += len(s.entries)
		s.mu.Unlock()
	}
	return n
}

// Ready is the inner service's Ready; the key's limit is applied in Call.
func (k *Keyed[Req, Res, K]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	p, err := k.inner.Ready(ctx)
	if err != nil {
		return p, err
	}
	return k.pool.Wrap((*keyedWrapper[Req, Res, K])(k), p), nil
}

// keyedWrapper is the limit as its tower.Wrapper, kept off its method set.
type keyedWrapper[Req, Res any, K comparable] Keyed[Req, Res, K]

func (w *keyedWrapper[Req, Res, K]) CallWrapped(ctx context.Context, inner tower.Permit[Req, Res], req Req) (Res, error) {
	k := (*Keyed[Req, Res, K])(w)
	// Gives the permit back on refusal or panic; after Call, a no-op.
	defer inner.Release()
	if err := k.admit(ctx, k.key(req)); err != nil {
		var zero Res
		return zero, err
	}
	return inner.Call(ctx, req)
}

func (*keyedWrapper[Req, Res, K]) ReleaseWrapped(inner tower.Permit[Req, Res]) { inner.Release() }

// admit takes a token of key's bucket, waiting for it if allowed.
func (k *Keyed[Req, Res, K]) admit(ctx context.Context, key K) error {
	allowed := k.maxWait
	if allowed > 0 {
		if deadline, ok := ctx.Deadline(); ok {
			// A passed deadline allows no wait, but a token there now.
			allowed = max(0, min(allowed, time.Until(deadline)))
		}
	}
	s := k.shard(key)
	mark, wait, ok := s.take(k.g, key, mono.Now(), allowed)
	if !ok {
		if k.sink != nil {
			k.sink.Add(metrics.Throttled, 1)
		}
		return &KeyLimitError{Wait: wait}
	}
	if wait > 0 {
		return k.wait(ctx, s, key, mark, wait)
	}
	return nil
}

// shard returns the shard that holds key.
func (k *Keyed[Req, Res, K]) shard(key K) *keyShard[K] {
	if k.mask == 0 {
		return &k.shards[0]
	}
	return &k.shards[maphash.Comparable(k.seed, key)&k.mask]
}

// wait waits d for the token of mark reserved in key's bucket in s, and
// gives it back if ctx ends first or the sink panics.
func (k *Keyed[Req, Res, K]) wait(ctx context.Context, s *keyShard[K], key K, mark, d time.Duration) (err error) {
	granted := false
	defer func() {
		if !granted {
			s.giveBack(k.g, key, mark, mono.Now())
		}
	}()
	if k.sink != nil {
		k.sink.Add(metrics.Waiting, 1)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if k.sink != nil {
		k.sink.Add(metrics.Waiting, -1)
	}
	granted = err == nil
	return err
}

// A keyShard is the part of the table of keys that the key's maphash
// picks, with its own lock and share of the cap: a dense slice of
// entries, which a cursor goes round, and an index from key to position.
type keyShard[K comparable] struct {
	mu      sync.Mutex
	index   map[K]int
	entries []keyEntry[K]
	cursor  int // the next entry to check, if below len(entries)
	max     int // this shard's share of the cap
	_       [64]byte
}

type keyEntry[K comparable] struct {
	key K
	tat time.Duration // see gcra
}

// take reserves a token of key's bucket at now if it comes within
// allowed, and returns its mark (see gcra.reserve), the wait for it, and
// true; or takes nothing and returns the wait and false. Then it sweeps.
// The lock is released even if looking key up panics (an interface key
// may hold an unhashable slice).
func (s *keyShard[K]) take(g gcra, key K, now, allowed time.Duration) (mark, wait time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.sweep(g, now)
	i, found := s.index[key]
	if !found {
		// A key never seen has a full bucket: its token is there.
		next, _ := g.reserve(now, now)
		s.insert(key, next)
		return next, 0, true
	}
	next, wait := g.reserve(s.entries[i].tat, now)
	if wait > allowed {
		return 0, wait, false
	}
	s.entries[i].tat = next
	return next, wait, true
}

// insert adds key with state tat, deleting an entry first if the shard is
// at its share of the cap. s.mu must be held.
func (s *keyShard[K]) insert(key K, tat time.Duration) {
	if key != key {
		return // a NaN: the index could never find it, nor delete it
	}
	if len(s.entries) >= s.max {
		s.evict()
	}
	s.index[key] = len(s.entries)
	s.entries = append(s.entries, keyEntry[K]{key: key, tat: tat})
}

// evict deletes, among the next evictScan entries from the cursor, the
// one whose bucket is full soonest (one that is full already, if any), and
// moves the cursor past them. s.mu must be held, and the shard not empty.
func (s *keyShard[K]) evict() {
	n := len(s.entries)
	c := s.cursor
	if c >= n {
		c = 0
	}
	victim := c
	for range min(evictScan, n) {
		if s.entries[c].tat < s.entries[victim].tat {
			victim = c
		}
		if c++; c == n {
			c = 0
		}
	}
	s.cursor = c
	s.remove(victim)
}

// sweep checks the next sweepStep entries at the cursor and deletes those
// whose bucket is full at now. s.mu must be held.
func (s *keyShard[K]) sweep(g gcra, now time.Duration) {
	for range sweepStep {
		if len(s.entries) == 0 {
			return
		}
		if s.cursor >= len(s.entries) {
			s.cursor = 0
		}
		if g.full(s.entries[s.cursor].tat, now) {
			s.remove(s.cursor) // the last entry moves here: checked next
		} else {
			s.cursor++
		}
	}
}

// remove deletes entry i, moving the last entry into its place. s.mu
// must be held.
func (s *keyShard[K]) remove(i int) {
	last := len(s.entries) - 1
	delete(s.index, s.entries[i].key)
	if i != last {
		s.entries[i] = s.entries[last]
		s.index[s.entries[i].key] = i
	}
	s.entries[last] = keyEntry[K]{} // so the key can be collected
	s.entries = s.entries[:last]
}

// giveBack returns key's unused token of mark at now (see gcra.giveBack).
// A key deleted meanwhile had its debt forgiven: nothing to give back.
func (s *keyShard[K]) giveBack(g gcra, key K, mark, now time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.index[key]; ok {
		s.entries[i].tat = g.giveBack(s.entries[i].tat, mark, now)
	}
}

// ErrKeyLimited is what a [*KeyLimitError] matches with errors.Is: a
// request refused because its key was over its limit. Its message is
// "request throttled: key over its rate limit".
var ErrKeyLimited error = keyLimited{}

type keyLimited struct{}

func (keyLimited) Error() string   { return "request throttled: key over its rate limit" }
func (keyLimited) Throttled() bool { return true }

// KeyLimitError is the error of a Call that a [Keyed] refused because the
// request's key had no token, and none would come within the max wait or
// before ctx's deadline. Nothing was sent. It wraps [ErrKeyLimited], and
// answers [tower.IsThrottled] but not [tower.IsOverloaded]: the caller is
// over its own rate, the service is not busy (towerhttp answers 429).
type KeyLimitError struct {
	// Wait is how long after the refusal the key's next token is there
	// (see [tower.RetryAfter]).
	Wait time.Duration
}

func (e *KeyLimitError) Error() string {
	return fmt.Sprintf("%v; next token in %v", ErrKeyLimited, e.Wait)
}

// RetryAfter returns Wait, for [tower.RetryAfter].
func (e *KeyLimitError) RetryAfter() time.Duration { return e.Wait }

// Unwrap returns [ErrKeyLimited].
func (e *KeyLimitError) Unwrap() error { return ErrKeyLimited }

// Throttled answers true: see [tower.IsThrottled].
func (e *KeyLimitError) Throttled() bool { return true }
