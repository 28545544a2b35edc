package towerredis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/metrics"
)

// The scripts of the concurrency limit. KEYS[1] is the limit's sorted set:
// member, a lease id; score, the lease's expiry in ms on Redis's clock. A
// key of another type is answered with a string, an ErrBadReply, rather
// than a WRONGTYPE error, which would read as Redis failing.
var (
	// acquireScript: ARGV = member, max, ttl (ms). Drops the expired
	// leases, then grants member (again, if it holds it already) if fewer
	// than max are held: {1, 0}; otherwise {0, ms until the earliest lease
	// expires}.
	acquireScript = redis.NewScript(`
local key = KEYS[1]
local kind = redis.call('TYPE', key).ok
if kind ~= 'zset' and kind ~= 'none' then return 'the key holds a ' .. kind end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local max, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
if redis.call('ZSCORE', key, ARGV[1]) or redis.call('ZCARD', key) < max then
	redis.call('ZADD', key, now + ttl, ARGV[1])
	if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
	return {1, 0}
end
local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {0, tonumber(first[2]) - now}
`)
	// renewScript: ARGV = ttl (ms), then the members to renew. Renews
	// each one still in the set, even if past its expiry (nobody was
	// granted its place), and returns the positions (from 1) of the others.
	renewScript = redis.NewScript(`
local key = KEYS[1]
local kind = redis.call('TYPE', key).ok
if kind ~= 'zset' and kind ~= 'none' then return 'the key holds a ' .. kind end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local lost = {}
for i = 2, #ARGV do
	if redis.call('ZSCORE', key, ARGV[i]) then
		redis.call('ZADD', key, 'XX', now + ttl, ARGV[i])
	else
		lost[#lost + 1] = i - 1
	end
end
if #lost < #ARGV - 1 and redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
return lost
`)
	// releaseScript: ARGV = member. Removes it: 1, or 0 if it was gone.
	releaseScript = redis.NewScript(`return redis.call('ZREM', KEYS[1], ARGV[1])`)
)

// MinTTLTimeouts is how many round-trip timeouts a lease's TTL must hold
// at least, so that a lease outlives one failed renewal: the second
// renewal after its last write lands within 3 timeouts plus two thirds of
// the TTL.
const MinTTLTimeouts = 9

// MinTTL is the shortest TTL a lease may have whatever the timeout: Redis
// keeps its expiry in milliseconds, and a third of it must be one.
const MinTTL = 3 * time.Millisecond

// ErrLeaseLost is reported to the observer of [WithObserver] when a lease
// of this replica was gone from Redis when renewed or released, after the
// replica could not renew it for a whole TTL (a pause, or Redis away that
// long). The call that held it goes on, so until it returns the fleet may
// run one request over the limit for each lease lost.
var ErrLeaseLost = errors.New("towerredis: lease lost: it expired before this replica renewed it")

// WithPollInterval sets how often a caller waiting in a [Concurrency]'s
// Ready asks Redis again for a lease, instead of DefaultPollInterval: each
// wait lasts from half to one and a half times d, at random, so that the
// fleet's waiters do not ask in step. It panics if d is not positive.
func WithPollInterval(d time.Duration) ConcurrencyOption {
	if d <= 0 {
		panic(fmt.Sprintf("towerredis.WithPollInterval: interval must be positive, got %v", d))
	}
	return concurrencyOption(func(o *options) { o.poll = d })
}

// Concurrency is middleware that limits the requests in flight in the
// inner service across a whole fleet to max: each holds a lease, a member
// of a sorted set in Redis counted by every replica sharing the name.
//
// A lease has a time to live on Redis's clock. A replica renews its leases
// every third of the TTL, in one round trip, while it holds some; the
// leases of a replica that crashed come back within a TTL. A lease found
// gone is reported as [ErrLeaseLost].
//
// Ready asks Redis for a lease, granted at once if a place is free, even
// to a done ctx; otherwise it asks again after the poll interval
// ([WithPollInterval]), or when the earliest lease expires if sooner, until
// ctx ends. Waiters are not served in order: a freed place goes to the
// first waiter, on any replica, to ask.
//
// The lease is given back, in a round trip on the goroutine that ends the
// request, when its call returns or panics, its permit is released unused,
// or the inner service's Ready fails; if that round trip fails, or the one
// that granted it timed out, the lease expires within the TTL. When Redis
// does not answer, the [FailMode] decides; a bad reply makes Ready fail
// with [ErrBadReply].
//
// A Concurrency is safe for concurrent use; build one with
// [NewConcurrency]. Req and Res are the request and response types.
type Concurrency[Req, Res any] struct {
	inner   tower.Service[Req, Res]
	client  redis.Scripter
	name    string
	keys    []string // the limit's sorted set, alone
	ttl     time.Duration
	maxArg  any // max, boxed once
	ttlArg  any // the TTL in ms, boxed once
	o       options
	replica string        // this limiter's part of its lease ids
	next    atomic.Uint64 // the last lease id handed out
	wraps   tower.WrapPool[Req, Res]

	mu       sync.Mutex
	held     map[uint64]string // lease id → member, of the leases to renew
	renewing bool              // whether timer is set, or its renew runs
	timer    *time.Timer       // runs renew
}

// NewConcurrency returns inner wrapped in a limit of max requests in
// flight across the replicas that use name on client's Redis, each request
// holding a lease of time to live ttl, kept in whole ms. Replicas that
// share a limit must give it the same max and ttl. Options: every
// [Option], and [WithPollInterval].
//
// NewConcurrency panics if inner or client is nil (a typed nil too), if
// client is a go-redis client whose ContextTimeoutEnabled is false, if
// name is empty, if max < 1, if an option is nil, or if ttl is below
// MinTTL or MinTTLTimeouts times the round-trip timeout (450ms by default).
func NewConcurrency[Req, Res any](inner tower.Service[Req, Res], client redis.Scripter, name string, max int, ttl time.Duration, opts ...ConcurrencyOption) *Concurrency[Req, Res] {
	return newConcurrency("towerredis.NewConcurrency", inner, client, name, max, ttl, opts)
}

// NewConcurrencyLayer returns a Layer that wraps each service in a
// [NewConcurrency] limit with these arguments: all the services it wraps
// share the one limit. It panics as NewConcurrency does, when called.
func NewConcurrencyLayer[Req, Res any](client redis.Scripter, name string, max int, ttl time.Duration, opts ...ConcurrencyOption) tower.Layer[Req, Res] {
	newConcurrency[Req, Res]("towerredis.NewConcurrencyLayer", tower.ServiceFunc[Req, Res](standIn[Req, Res]), client, name, max, ttl, opts)
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return NewConcurrency(inner, client, name, max, ttl, opts...)
	})
}

func newConcurrency[Req, Res any](fn string, inner tower.Service[Req, Res], client redis.Scripter, name string, limit int, ttl time.Duration, opts []ConcurrencyOption) *Concurrency[Req, Res] {
	if guard.IsNil(inner) {
		panic(fn + ": inner is nil")
	}
	checkClient(fn, client, name)
	if limit < 1 {
		panic(fmt.Sprintf("%s: max must be at least 1, got %d", fn, limit))
	}
	o := concurrencyOptions(fn, opts)
	if ttl <= 0 {
		panic(fmt.Sprintf("%s: ttl must be positive, got %v", fn, ttl))
	}
	if least := max(MinTTLTimeouts*o.timeout, MinTTL); ttl < least {
		panic(fmt.Sprintf("%s: ttl must be at least %d times the round-trip timeout of %v, and at least %v, so that renewals keep up: at least %v, got %v",
			fn, MinTTLTimeouts, o.timeout, MinTTL, least, ttl))
	}
	return &Concurrency[Req, Res]{
		inner: inner, client: client, name: name,
		keys: []string{"{" + o.prefix + ":lease:" + name + "}"},
		ttl:  ttl, maxArg: limit, ttlArg: ttl.Milliseconds(), o: o,
		replica: strconv.FormatUint(rand.Uint64(), 36) + ":",
		held:    make(map[uint64]string),
	}
}

// Ready gets a lease as [Concurrency] says, then waits for the inner
// service. If ctx ends first, Ready returns ctx.Err() unchanged; if the
// inner service fails, the lease is given back and its error returned.
func (c *Concurrency[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	id, err := c.acquire(ctx)
	if ue, ok := err.(*UnreachableError); ok {
		return refuse[Req, Res](ue), nil
	}
	if err != nil {
		return tower.Permit[Req, Res]{}, err
	}
	held := true
	defer func() {
		if held { // the inner service failed, or it or the sink panicked
			c.release(id)
		}
	}()
	if c.o.sink != nil {
		c.o.sink.Add(metrics.InFlight, 1)
	}
	p, err := c.inner.Ready(ctx)
	if err != nil {
		return p, err
	}
	held = false
	return c.wraps.WrapNoted((*leaseWrapper[Req, Res])(c), p, id), nil
}

// acquire asks Redis for a lease until it gets one or ctx ends, and
// returns its id; 0 is admitted without a lease (FailOpen). The polls of
// one call ask for the same member, which the script grants again if it
// holds it already: if an observer or the sink panics, it is forgotten.
func (c *Concurrency[Req, Res]) acquire(ctx context.Context) (lease uint64, err error) {
	id := c.next.Add(1)
	member := c.member(id)
	var w watch
	defer w.done(c.o.sink, func() { c.giveBack(lease) })
	guard.Undo(func() { lease, err = c.poll(ctx, id, member, &w) }, func() { c.forget(member) })
	return lease, err
}

// poll is acquire's loop.
func (c *Concurrency[Req, Res]) poll(ctx context.Context, id uint64, member string, w *watch) (uint64, error) {
	for {
		reply, err := roundTrip(ctx, &c.o, "lease.acquire", func(ctx context.Context) (any, error) {
			return acquireScript.Run(ctx, c.client, c.keys, member, c.maxArg, c.ttlArg).Result()
		}, acquired, nil)
		if err != nil {
			return 0, c.o.failed(c.name, err)
		}
		if reply[0] == 1 {
			c.hold(id, member)
			return id, nil
		}
		wait := min(c.pollWait(), time.Duration(reply[1])*time.Millisecond)
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		w.start(c.o.sink, nothing)
		if !sleep(ctx, wait) {
			return 0, ctx.Err()
		}
	}
}

// acquired reads the acquire script's reply: {1, 0}, or {0, ms > 0}.
func acquired(reply any) ([2]int64, bool) {
	v, ok := ints[[2]int64](reply)
	return v, ok && (v == [2]int64{1, 0} || v[0] == 0 && v[1] > 0)
}

// pollWait returns how long a waiter waits before it asks again.
func (c *Concurrency[Req, Res]) pollWait() time.Duration {
	return c.o.poll/2 + rand.N(c.o.poll)
}

// member returns the sorted set's member for lease id.
func (c *Concurrency[Req, Res]) member(id uint64) string {
	var buf [64]byte
	return string(strconv.AppendUint(append(buf[:0], c.replica...), id, 36))
}

// hold adds a lease to those the replica renews, starting the renewals.
func (c *Concurrency[Req, Res]) hold(id uint64, member string) {
	c.mu.Lock()
	c.held[id] = member
	if !c.renewing {
		c.renewing = true
		c.timer = time.AfterFunc(c.ttl/3, c.renew)
	}
	c.mu.Unlock()
}

// unhold takes a lease out of those the replica renews, and returns its
// member and whether it was there (not if a renewal found it lost). The
// last one out stops the renewals, or leaves a running renew to.
func (c *Concurrency[Req, Res]) unhold(id uint64) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	member, ok := c.held[id]
	if !ok {
		return "", false
	}
	delete(c.held, id)
	if len(c.held) == 0 && c.renewing && c.timer.Stop() {
		c.renewing = false
	}
	return member, true
}

// release ends a request that held lease id (0: none). It leaves InFlight
// first, so that the count never shows more requests than there are; the
// lease is given back even if the sink panics.
func (c *Concurrency[Req, Res]) release(id uint64) {
	defer c.giveBack(id)
	if c.o.sink != nil {
		c.o.sink.Add(metrics.InFlight, -1)
	}
}

// giveBack removes lease id from Redis in one round trip, unless it was
// none or was found lost.
func (c *Concurrency[Req, Res]) giveBack(id uint64) {
	if id == 0 {
		return
	}
	member, ok := c.unhold(id)
	if !ok {
		return
	}
	roundTrip(context.Background(), &c.o, "lease.release", func(ctx context.Context) (any, error) {
		n, err := releaseScript.Run(ctx, c.client, c.keys, member).Result()
		if err == nil && n == int64(0) {
			return nil, fmt.Errorf("%w: lease %s of limit %q", ErrLeaseLost, member, c.name)
		}
		return n, err
	}, removed, nil)
}

// removed reads the release script's reply: 1, the lease was removed.
func removed(reply any) (bool, bool) {
	n, ok := reply.(int64)
	return true, ok && n == 1
}

// forget removes member, which Redis may have granted to an acquire that
// did not finish. It tells no observer, which may be what panicked.
func (c *Concurrency[Req, Res]) forget(member string) {
	ctx, cancel := context.WithTimeout(context.Background(), c.o.timeout)
	defer cancel()
	releaseScript.Run(ctx, c.client, c.keys, member)
}
