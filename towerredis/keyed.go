package towerredis

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerredis/internal/isnil"
	"github.com/towergo/tower/towerredis/internal/mono"
)

// Keyed is middleware that limits requests per key, for a whole
// fleet: each key drawn from the requests (a tenant, a client address)
// has a token bucket of its own in Redis, as a [Bucket] has, of burst
// tokens filling at num per period, shared by every replica that uses the
// same name. A key's bucket is the Redis key "prefix:rate:name:{key}":
// the request's key is the hash tag, so the buckets of a million keys
// spread over a Redis Cluster's nodes by key instead of all landing on
// one, and the buckets of one key under several names (a rate and a quota,
// say) share a node. (A key holding a '}' has a tag cut short at it: still
// one slot per key, so still correct.) Each bucket expires when it is full
// again, so Redis holds at most burst*per/num of each key after its last
// request, and nothing at all is kept per key in the replica: memory stays
// bounded under any number of distinct keys.
//
// The key is known only when the request is, in Call; so Ready is the
// inner service's Ready, and readiness says nothing about any key. Call
// draws the key and takes a token of its bucket in one round trip: if
// there is none, Call refuses at once, without calling the inner service,
// with the error of package limit's per-key refusal, a
// [*limit.KeyLimitError] (wrapped with the limit's name and the key), which
// answers [tower.IsThrottled] and says when the key's next token comes
// ([tower.RetryAfter]); or, with [WithMaxWait], Call reserves the key's
// next token if it is due within that wait and before the Call's ctx's
// deadline, and waits for it in Call, holding the inner permit. If ctx
// ends while it waits, Call returns ctx.Err(), and the token goes back to
// the key's bucket (one more round trip) if no request of the key reserved
// one after it; otherwise it is lost, since the waiter behind holds the
// instant after it. These are the semantics of limit.Keyed, kept here for
// the fleet: a per-key wait happens in Call, after the request was built,
// and is bounded; see limit.Keyed for why a waiting Call holds the inner
// permit, and why the default is not to wait.
//
// Redis unreachable: FailOpen calls the inner service; FailClosed refuses
// at once with an [*UnreachableError] that wraps the round trip's error. A
// reply that is not the script's refuses with an error that wraps
// [ErrBadReply]. An empty key is refused with [ErrEmptyKey]. In every
// refusal the inner permit is released unused.
//
// [WithMetrics] reports Waiting, for Calls waiting for their key's token,
// and Throttled, +1 for each Call refused because its key had no token.
//
// A Keyed is safe for concurrent use. The zero Keyed is not
// usable: build one with [NewKeyed]. Req and Res are the request and
// response types.
type Keyed[Req, Res any] struct {
	inner  tower.Service[Req, Res]
	b      gcra
	key    func(Req) string
	prefix string // "prefix:rate:name:{"
	pool   tower.WrapPool[Req, Res]
}

// NewKeyed returns inner wrapped in a fleet-wide limit of num
// requests per period per key, with room for burst at once, the key of a
// request being key(req); the buckets are kept in Redis through client
// under the given name. Options: every [Option], and [WithMaxWait].
//
// It panics, naming the parameter, as [NewBucket] does, and if key is
// nil.
func NewKeyed[Req, Res any](inner tower.Service[Req, Res], client redis.Scripter, name string, key func(Req) string, num int, per time.Duration, burst int, opts ...KeyedOption) *Keyed[Req, Res] {
	return newKeyed("towerredis.NewKeyed", inner, client, name, key, num, per, burst, opts)
}

func newKeyed[Req, Res any](fn string, inner tower.Service[Req, Res], client redis.Scripter, name string, key func(Req) string, num int, per time.Duration, burst int, opts []KeyedOption) *Keyed[Req, Res] {
	if isnil.Is(inner) {
		panic(fn + ": inner is nil")
	}
	if key == nil {
		panic(fn + ": key is nil")
	}
	o := keyedOptions(fn, opts)
	return &Keyed[Req, Res]{
		inner: inner, b: newGCRA(fn, client, name, num, per, burst, o),
		key: key, prefix: o.prefix + ":rate:" + name + ":{",
	}
}

// NewKeyedLayer returns a Layer that wraps each service in a
// [NewKeyed] limit with these arguments: every service it wraps
// shares the buckets of name. It panics as NewKeyed does.
func NewKeyedLayer[Req, Res any](client redis.Scripter, name string, key func(Req) string, num int, per time.Duration, burst int, opts ...KeyedOption) tower.Layer[Req, Res] {
	newKeyed[Req, Res]("towerredis.NewKeyedLayer", tower.ServiceFunc[Req, Res](standIn[Req, Res]), client, name, key, num, per, burst, opts)
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return NewKeyed(inner, client, name, key, num, per, burst, opts...)
	})
}

// Key returns the Redis key that holds the bucket of the request key k.
func (r *Keyed[Req, Res]) Key(k string) string { return r.prefix + k + "}" }

// Ready waits for the inner service: a Keyed's readiness is its inner
// service's, since the key is known only in Call.
func (r *Keyed[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	inner, err := r.inner.Ready(ctx)
	if err != nil {
		return inner, err
	}
	return r.pool.Wrap((*keyedPermit[Req, Res])(r), inner), nil
}

// keyedPermit is a Keyed's permit, whose Call applies the key's
// limit.
type keyedPermit[Req, Res any] Keyed[Req, Res]

// CallWrapped takes a token of req's key, as the type's doc says, and
// calls the inner permit, or releases it and refuses.
func (p *keyedPermit[Req, Res]) CallWrapped(ctx context.Context, inner tower.Permit[Req, Res], req Req) (Res, error) {
	r := (*Keyed[Req, Res])(p)
	defer inner.Release() // if the key function or the admission panics; after Call, nothing
	k := r.key(req)
	var err error
	if k == "" {
		err = ErrEmptyKey
	} else {
		err = r.admit(ctx, k)
	}
	if err != nil {
		var zero Res
		return zero, err
	}
	return inner.Call(ctx, req)
}

// ReleaseWrapped releases the inner permit: no token was taken.
func (p *keyedPermit[Req, Res]) ReleaseWrapped(inner tower.Permit[Req, Res]) { inner.Release() }

// admit takes a token of key k's bucket, waiting up to the max wait and
// within ctx. If the sink panics as the wait begins or ends, the token
// goes back before the panic goes on up to the caller.
func (r *Keyed[Req, Res]) admit(ctx context.Context, k string) (err error) {
	keys := []string{r.Key(k)}
	end := mono.Now() + r.b.o.maxWait
	if d, ok := ctx.Deadline(); ok {
		end = min(end, mono.Now()+time.Until(d))
	}
	g, err := r.b.ask(ctx, keys, 1, end-mono.Now())
	if err != nil {
		return r.b.failed(err)
	}
	if g.n == 0 {
		if r.b.o.sink != nil {
			r.b.o.sink.Add(metrics.Throttled, 1)
		}
		return fmt.Errorf("towerredis: limit %q, key %q: %w", r.b.name, k, &limit.KeyLimitError{Wait: g.due - g.at})
	}
	giveBack := func() { r.b.giveBack(keys, 1, g.tat) }
	var w watch
	defer w.done(r.b.o.sink, func() {
		if err == nil { // a Call whose ctx ended has given its token back
			giveBack()
		}
	})
	if !sleepUntil(ctx, g.due, &w, r.b.o.sink, giveBack) {
		giveBack()
		return ctx.Err()
	}
	return nil
}

// WithMaxWait lets a [Keyed]'s Call wait up to d for its key's next token
// (and never beyond the Call's ctx), rather than fail at once (default 0:
// fail at once), as limit.WithMaxWait does for limit.Keyed: a key's
// caller waits in Call, after its request was built, holding the inner
// permit, so the default keeps a hot key from tying up the callers of the
// other keys. It panics if d is negative.
func WithMaxWait(d time.Duration) KeyedOption {
	if d < 0 {
		panic(fmt.Sprintf("towerredis.WithMaxWait: d must not be negative, got %v", d))
	}
	return keyedOption(func(o *options) { o.maxWait = d })
}
