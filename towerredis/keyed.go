package towerredis

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerredis/internal/mono"
)

// Keyed is middleware that limits requests per key for a whole fleet:
// each key drawn from the requests (a tenant, a client address) has a
// token bucket of its own in Redis, as a [Bucket] has, shared by every
// replica that uses the same name, and expiring once it is full again. The
// replica keeps nothing per key, so memory stays bounded under any number
// of keys.
//
// The key is known only in Call, so Ready is the inner service's Ready.
// Call takes a token of the key's bucket in one round trip. If there is
// none, Call refuses at once without calling the inner service, with a
// [*limit.KeyLimitError] wrapped with the limit's name and the key, as
// limit.Keyed does; it answers [tower.IsThrottled] and [tower.RetryAfter].
// With [WithMaxWait], Call reserves the key's next token if it is due
// within that wait and ctx's deadline, and waits for it holding the inner
// permit; if ctx ends first, Call returns ctx.Err() and the token goes back
// unless a request of the key reserved one after it.
//
// When Redis does not answer, the [FailMode] decides. A bad reply refuses
// with [ErrBadReply], an empty key with [ErrEmptyKey]. Every refusal
// releases the inner permit unused.
//
// A Keyed is safe for concurrent use. The zero Keyed is not usable: build
// one with [NewKeyed]. Req and Res are the request and response types.
type Keyed[Req, Res any] struct {
	inner  tower.Service[Req, Res]
	b      gcra
	key    func(Req) string
	prefix string // "prefix:rate:name:{"
	pool   tower.WrapPool[Req, Res]
}

// NewKeyed returns inner wrapped in a fleet-wide limit of num requests per
// period per key, with room for burst at once, the key of a request being
// key(req), kept in Redis through client under name. Options: every
// [Option], and [WithMaxWait]. It panics as [NewBucket] does, and if key
// is nil.
func NewKeyed[Req, Res any](inner tower.Service[Req, Res], client redis.Scripter, name string, key func(Req) string, num int, per time.Duration, burst int, opts ...KeyedOption) *Keyed[Req, Res] {
	return newKeyed("towerredis.NewKeyed", inner, client, name, key, num, per, burst, opts)
}

func newKeyed[Req, Res any](fn string, inner tower.Service[Req, Res], client redis.Scripter, name string, key func(Req) string, num int, per time.Duration, burst int, opts []KeyedOption) *Keyed[Req, Res] {
	if guard.IsNil(inner) {
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

// NewKeyedLayer returns a Layer that wraps each service in a [NewKeyed]
// limit with these arguments: every service it wraps shares the buckets of
// name. It panics as NewKeyed does, when called.
func NewKeyedLayer[Req, Res any](client redis.Scripter, name string, key func(Req) string, num int, per time.Duration, burst int, opts ...KeyedOption) tower.Layer[Req, Res] {
	newKeyed[Req, Res]("towerredis.NewKeyedLayer", tower.ServiceFunc[Req, Res](standIn[Req, Res]), client, name, key, num, per, burst, opts)
	return tower.LayerFunc[Req, Res](func(inner tower.Service[Req, Res]) tower.Service[Req, Res] {
		return NewKeyed(inner, client, name, key, num, per, burst, opts...)
	})
}

// Key returns the Redis key that holds the bucket of the request key k.
func (r *Keyed[Req, Res]) Key(k string) string { return r.prefix + k + "}" }

// Ready waits for the inner service; the limit applies in Call.
func (r *Keyed[Req, Res]) Ready(ctx context.Context) (tower.Permit[Req, Res], error) {
	inner, err := r.inner.Ready(ctx)
	if err != nil {
		return inner, err
	}
	return r.pool.Wrap((*keyedPermit[Req, Res])(r), inner), nil
}

// keyedPermit is a Keyed's permit, whose Call applies the key's limit.
type keyedPermit[Req, Res any] Keyed[Req, Res]

func (p *keyedPermit[Req, Res]) CallWrapped(ctx context.Context, inner tower.Permit[Req, Res], req Req) (Res, error) {
	r := (*Keyed[Req, Res])(p)
	defer inner.Release() // if the key function or the admission panics; after Call, nothing
	if err := r.admit(ctx, r.key(req)); err != nil {
		var zero Res
		return zero, err
	}
	return inner.Call(ctx, req)
}

func (p *keyedPermit[Req, Res]) ReleaseWrapped(inner tower.Permit[Req, Res]) { inner.Release() }

// admit takes a token of key k's bucket, waiting up to the max wait and
// within ctx; an empty k is an ErrEmptyKey. If the sink panics as the wait
// begins or ends, the token goes back first.
func (r *Keyed[Req, Res]) admit(ctx context.Context, k string) (err error) {
	if k == "" {
		return ErrEmptyKey
	}
	keys := []string{r.Key(k)}
	end := mono.Now() + r.b.o.maxWait
	if d, ok := ctx.Deadline(); ok {
		end = min(end, mono.Now()+time.Until(d))
	}
	g, err := r.b.ask(ctx, keys, 1, end-mono.Now())
	if err != nil {
		return r.b.o.failed(r.b.name, err)
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

// WithMaxWait lets a [Keyed]'s Call wait up to d, and never beyond its
// ctx, for its key's next token. The default, 0, fails at once: a waiting
// Call holds the inner permit, and a hot key would tie up the other keys'
// callers. It panics if d is negative.
func WithMaxWait(d time.Duration) KeyedOption {
	if d < 0 {
		panic(fmt.Sprintf("towerredis.WithMaxWait: d must not be negative, got %v", d))
	}
	return keyedOption(func(o *options) { o.maxWait = d })
}
