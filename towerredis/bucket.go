package towerredis

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/towerredis/internal/isnil"
)

// Bucket is middleware that lets at most num requests per period through,
// for a whole fleet: every replica that builds a Bucket with the same
// client's Redis, prefix and name shares one token bucket, of burst
// tokens that fills at num per period. The bucket lives in Redis as one
// key, "{prefix:rate:name}", holding the bucket's theoretical arrival time
// (GCRA, as in go-redis/redis_rate), read and moved by one atomic Lua
// script on Redis's own clock, so that the replicas' clocks do not matter.
// The whole key is the hash tag: the bucket is one key in one slot of a
// Redis Cluster, and any other key the limit may ever keep with it lands
// on the same node. The key expires when the bucket is full again, so
// Redis keeps nothing for a limit idle for the bucket's span
// (burst*per/num). The script takes the rate and the burst from each
// caller: replicas that share a name must agree on them, or each applies
// its own to the shared state.
//
// The bucket has the meaning of package limit's token bucket: a token
// every per/num, rounded up to the microsecond (Redis's clock's
// resolution), so the rate is never above num per period, and room for
// burst tokens at once.
//
// Ready takes a token, then waits for the inner service. A token there
// now is taken in one round trip, even with a done ctx (the "ready now?"
// probe of a LoadShed). Otherwise Ready reserves, in the same round trip,
// the next token if it is due before ctx's deadline and at most
// max(burst*per/num, [MinReserve]) from now, and sleeps until it: one
// round trip per request even for a caller that waits, and the fleet's
// waiters are served in the order their requests reach Redis. If the next
// token is further away, Ready sleeps until it and asks again. If ctx
// ends while Ready sleeps, Ready returns ctx.Err() and its reserved token
// is lost: the fleet gets one token fewer, which errs on the side of the
// limit, and Ready returns at once rather than after a round trip to give
// it back. [WithMetrics] reports Waiting while a caller sleeps.
//
// Each round trip is bounded by the timeout ([WithTimeout]). When Redis
// does not answer, or answers with an error, the [FailMode] decides:
// FailOpen admits the request without a token; FailClosed returns at once
// a permit whose Call fails with an [*UnreachableError], without reaching
// the inner service. A reply that is not the script's (a key of
// another type, say) never grants: Ready returns an error wrapping
// [ErrBadReply], which, being an error other than ctx's, marks the limit
// broken until someone repairs the key.
//
// A permit released unused gives its token back to the bucket in one
// round trip, bounded by the timeout (with [WithBatch], to the replica's
// batch at no cost); so does Ready when the inner service fails or ctx
// ends while Ready waits for it. As in package limit's token bucket, the
// token goes back only if no token was taken after it, by any replica: a
// later taker holds the instant after it, and giving it back would hand
// that instant to a second caller. Otherwise it is lost.
//
// With [WithBatch], a replica takes up to n tokens in one round trip and
// hands them out itself; see there for the accuracy it costs.
//
// A Bucket is safe for concurrent use. Without WithBatch each request
// makes one round trip to Redis; with WithBatch(n), n-1 requests in n
// take a token of the batch under a short mutex, with no round trip and
// no allocation. The zero Bucket is not
// usable: build one with [NewBucket]. Req and Res are the request and
// response types.
type Bucket[Req, Res any] struct {
	inner tower.Service[Req, Res]
	b     gcra
	keys  []string // the bucket's key, as the script takes it
	stock *stock   // the replica's batch; nil without WithBatch
	pool  tower.WrapPool[Req, Res]
}

// NewBucket returns inner wrapped in a fleet-wide limit of num requests per
// period with room for burst at once, kept in Redis through client under
// the given name: the replicas that use the same name share the limit.
// Options: every [Option], and [WithBatch].
//
// It panics, naming the parameter, if inner or client is nil (a typed nil
// too), client is a go-redis client whose ContextTimeoutEnabled is false,
// name is empty, num or burst is below 1, per is not positive, per/num is
// below a microsecond, burst*per/num is beyond 142 years, an option is
// nil, or WithBatch asks for a batch larger than burst.
func NewBucket[Req, Res any](inner tower.Service[Req, Res], client redis.Scripter, name string, num int, per time.Duration, burst int, opts ...BucketOption) *Bucket[Req, Res] {
	return newBucket("towerredis.NewBucket", inner, client, name, num, per, burst, opts)
}

func newBucket[Req, Res any](fn string, inner tower.Service[Req, Res], client redis.Scripter, name string, num int, per time.Duration, burst int, opts []BucketOption) *Bucket[Req, Res] {
	if isnil.Is(inner) {
		panic(fn + ": inner is nil")
	}
	o := bucketOptions(fn, opts)
	r := &Bucket[Req, Res]{inner: inner, b: newGCRA(fn, client, name, num, per, burst, o)}
	r.keys = []string{"{" + o.prefix + ":rate:" + name + "}"}
	if o.batch > 1 {
		r.stock = newStock(&r.b, r.keys, o.batch)
	}
	return r
}

// NewBucketLayer returns a Layer that wraps each service in a [NewBucket]
// limit with these arguments: every service it wraps shares the one
// bucket named name, as the replicas do. It panics as NewBucket does.
func NewBucketLayer[Req, Res any](client redis.Scripter, name string, num int, per time.Duration, burst int, opts ...BucketOption) tower.Layer[Req, Res] {
	// Checked now, with a stand-in service, so that bad input panics where
	// the layer is built.
	newBucket[Req, Res]("towerredis.NewBucketLayer", tower.ServiceFunc[Req, Res](standIn[Req, Res]), client, name, num, per, burst, opts)
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return NewBucket(inner, client, name, num, per, burst, opts...)
	})
}

// standIn is the service a layer's constructor checks its arguments with.
func standIn[Req, Res any](context.Context, Req) (Res, error) {
	var zero Res
	return zero, nil
}

// Key returns the Redis key that holds the bucket's state.
func (r *Bucket[Req, Res]) Key() string { return r.keys[0] }

// Ready takes a token of the fleet's bucket, waiting for one as the type's
// doc says, then waits for the inner service. A token there now is taken
// even if ctx is already done. If ctx ends first, Ready returns ctx.Err()
// unchanged.
func (r *Bucket[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	from, mark, err := r.acquire(ctx)
	if ue, ok := err.(*UnreachableError); ok {
		return refuse[Req, Res](ue), nil
	}
	if err != nil {
		return tower.Permit[Req, Res]{}, err
	}
	held := true
	defer func() {
		// The inner service failed, or panicked: give the token back.
		if held {
			r.giveBack(from, mark)
		}
	}()
	inner, err := r.inner.Ready(ctx)
	if err != nil {
		return inner, err
	}
	held = false
	return r.pool.WrapNoted(r.wrapper(from), inner, mark), nil
}

// acquire takes a token, from the replica's batch or from Redis, and
// returns where it came from and its mark, which says where it goes back
// if unused: the tat its take answered, for a token of Redis; the
// batch's and the token's numbers, for a token of the batch.
//
// If the sink panics as the caller's wait ends, the token the wait got
// goes back before the panic goes on up to the caller.
func (r *Bucket[Req, Res]) acquire(ctx context.Context) (from outcome, mark uint64, err error) {
	var w watch
	defer w.done(r.b.o.sink, func() { r.giveBack(from, mark) })
	if r.stock != nil {
		return r.stock.take(ctx, &w)
	}
	var g grant
	if g, from, err = r.b.take(ctx, r.keys, 1, &w); err != nil || from != fromRedis {
		return from, 0, err
	}
	// A reserved token, due later: if ctx ends first it is lost, which
	// errs on the side of the limit; if the sink panics as the wait
	// begins, it goes back.
	if !sleepUntil(ctx, g.due, &w, r.b.o.sink, func() { r.b.giveBack(r.keys, 1, g.tat) }) {
		return 0, 0, ctx.Err()
	}
	return fromRedis, uint64(g.tat), nil
}

// giveBack returns the token of an outcome, whose mark acquire returned.
func (r *Bucket[Req, Res]) giveBack(from outcome, mark uint64) {
	if from == fromRedis {
		r.b.giveBack(r.keys, 1, int64(mark))
	} else if from == fromStock {
		r.stock.giveBack(mark)
	}
}

// wrapper is the NotedWrapper for a permit whose token came from where
// from says: each is a pointer to r, so storing one allocates nothing. A
// permit's note is its token's mark.
func (r *Bucket[Req, Res]) wrapper(from outcome) tower.NotedWrapper[Req, Res] {
	if from == fromStock {
		return (*stockPermit[Req, Res])(r)
	}
	if from == failedOpen {
		return (*openPermit[Req, Res])(r)
	}
	return (*redisPermit[Req, Res])(r)
}

// redisPermit is a permit whose token came from the bucket in Redis.
type redisPermit[Req, Res any] Bucket[Req, Res]

// CallNoted calls the inner permit: the token is spent.
func (p *redisPermit[Req, Res]) CallNoted(ctx context.Context, inner tower.Permit[Req, Res], _ uint64, req Req) (Res, error) {
	return inner.Call(ctx, req)
}

// ReleaseNoted gives the token back to Redis.
func (p *redisPermit[Req, Res]) ReleaseNoted(inner tower.Permit[Req, Res], mark uint64) {
	inner.Release()
	p.b.giveBack(p.keys, 1, int64(mark))
}

// stockPermit is a permit whose token came from the replica's batch.
type stockPermit[Req, Res any] Bucket[Req, Res]

func (p *stockPermit[Req, Res]) CallNoted(ctx context.Context, inner tower.Permit[Req, Res], _ uint64, req Req) (Res, error) {
	return inner.Call(ctx, req)
}

func (p *stockPermit[Req, Res]) ReleaseNoted(inner tower.Permit[Req, Res], mark uint64) {
	inner.Release()
	p.stock.giveBack(mark)
}

// openPermit is a permit admitted without a token, Redis being
// unreachable under FailOpen: it has nothing to give back.
type openPermit[Req, Res any] Bucket[Req, Res]

func (p *openPermit[Req, Res]) CallNoted(ctx context.Context, inner tower.Permit[Req, Res], _ uint64, req Req) (Res, error) {
	return inner.Call(ctx, req)
}

func (p *openPermit[Req, Res]) ReleaseNoted(inner tower.Permit[Req, Res], _ uint64) { inner.Release() }

// WithBatch makes a [Bucket] take up to n tokens from Redis in one round
// trip and hand them out to its own callers, so that a hot limit costs
// about one round trip per n requests instead of one per request. n = 1
// is no batching, the default.
//
// A batch holds the tokens Redis granted, each with the instant the
// fleet's bucket made it due (a batch asked for by a caller that may wait
// reserves tokens due up to its wait, as Ready does for one); the replica
// hands each out no earlier than that instant, in order, and a token not
// handed out within the bucket's span (burst*per/num) of it is lost: no
// replica keeps a token longer than the bucket itself would have, and the
// fleet's bursts stay within burst plus n-1 per replica. A permit released
// unused gives its token back to the batch if it was the last handed out,
// where it is lost after a span too, or, if it was the batch's first and
// nothing else of the batch was handed out, gives the whole batch back to
// Redis; any other token released unused is lost.
//
// The cost is accuracy when a replica's traffic stops or stalls: the
// tokens it took and did not use are lost, at most n-1 per replica per
// batch, so a fleet of R replicas whose traffic stops admits up to
// R*(n-1) fewer requests than the limit allows (with 8 replicas and
// batches of 10, 72 tokens: 7% of a second of a 1,000/s limit, once). While
// callers keep coming, every token is used: TestBucketFleetAccuracy measures
// 8 replicas sharing 1,000/s within 2% of the limit with batches of 10, at
// about 0.1 round trips per request. It panics if n is below 1, and
// NewBucket panics if n is above its burst. A Keyed takes no batch: the
// tokens of one key are too few per replica to batch.
func WithBatch(n int) BucketOption {
	if n < 1 {
		panic(fmt.Sprintf("towerredis.WithBatch: n must be at least 1, got %d", n))
	}
	return bucketOption(func(o *options) { o.batch = n })
}
