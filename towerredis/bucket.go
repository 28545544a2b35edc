package towerredis

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
)

// Bucket is middleware that lets at most num requests per period through
// for a whole fleet: the replicas that build a Bucket with the same Redis,
// prefix and name share one token bucket of burst tokens, with a token
// every per/num, rounded up to the microsecond so that the rate is never
// above num per period. Its state is one key, [Bucket.Key], which expires
// once the bucket is full again. Replicas that share a name must agree on
// num, per and burst.
//
// Ready takes a token there now in one round trip, even with a done ctx.
// Otherwise the same round trip reserves the next token if it is due
// before ctx's deadline and within max(burst*per/num, [MinReserve]), and
// Ready sleeps until it, so the fleet's waiters are served in the order
// they reach Redis; a token further away is slept for, then asked for
// again. If ctx ends while Ready sleeps, the reserved token is lost,
// erring on the side of the limit.
//
// A token goes back when its permit is released unused or the inner
// service's Ready fails, but only if no replica took a token after it;
// otherwise it is lost. When Redis does not answer, the [FailMode]
// decides. A bad reply makes Ready fail with [ErrBadReply], marking the
// limit broken until the key is repaired.
//
// A Bucket is safe for concurrent use. The zero Bucket is not usable: build
// one with [NewBucket]. Req and Res are the request and response types.
type Bucket[Req, Res any] struct {
	inner tower.Service[Req, Res]
	b     gcra
	keys  []string // the bucket's key, as the script takes it
	stock *stock   // the replica's batch; nil without WithBatch
	pool  tower.WrapPool[Req, Res]
}

// NewBucket returns inner wrapped in a fleet-wide limit of num requests per
// period with room for burst at once, kept in Redis through client under
// name. Options: every [Option], and [WithBatch].
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
	if guard.IsNil(inner) {
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
// bucket named name. It panics as NewBucket does, when called.
func NewBucketLayer[Req, Res any](client redis.Scripter, name string, num int, per time.Duration, burst int, opts ...BucketOption) tower.Layer[Req, Res] {
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

// Ready takes a token as [Bucket] says, then waits for the inner service.
// If ctx ends first, Ready returns ctx.Err() unchanged.
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
		if held { // the inner service failed, or panicked
			r.giveBack(from, mark)
		}
	}()
	inner, err := r.inner.Ready(ctx)
	if err != nil {
		return inner, err
	}
	held = false
	// Each wrapper is r itself, so storing one allocates nothing.
	switch from {
	case failedOpen:
		return inner, nil // no token to give back
	case fromStock:
		return r.pool.WrapNoted((*stockPermit[Req, Res])(r), inner, mark), nil
	}
	return r.pool.WrapNoted((*redisPermit[Req, Res])(r), inner, mark), nil
}

// acquire takes a token, from the replica's batch or from Redis, and
// returns where it came from and its mark, for giveBack: the tat its take
// answered, or stockMark. If the sink panics as the wait ends, the token
// goes back before the panic goes on.
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
	// A reserved token: lost if ctx ends first; given back if the sink
	// panics as the wait begins.
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

// redisPermit is a permit whose token came from the bucket in Redis; its
// note is the token's mark.
type redisPermit[Req, Res any] Bucket[Req, Res]

func (p *redisPermit[Req, Res]) CallNoted(ctx context.Context, inner tower.Permit[Req, Res], _ uint64, req Req) (Res, error) {
	return inner.Call(ctx, req)
}

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

// WithBatch makes a [Bucket] take up to n tokens from Redis in one round
// trip and hand them out to its own callers, so that a hot limit costs
// about one round trip per n requests. n = 1, the default, is no batching.
//
// The replica hands a batch's tokens out in order, none before the fleet's
// bucket made it due, and drops one not handed out within the bucket's
// span (burst*per/num), so the fleet's bursts stay within burst plus n-1
// per replica. A token released unused goes back to the batch if it was
// the last handed out; the batch's first, if nothing else was handed out,
// sends the whole batch back to Redis; any other is lost, as are the up to
// n-1 tokens a replica holds when its traffic stops.
//
// It panics if n is below 1, and NewBucket panics if n is above its burst.
func WithBatch(n int) BucketOption {
	if n < 1 {
		panic(fmt.Sprintf("towerredis.WithBatch: n must be at least 1, got %d", n))
	}
	return bucketOption(func(o *options) { o.batch = n })
}
