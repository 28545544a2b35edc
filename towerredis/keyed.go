package towerredis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerredis/internal/isnil"
	"github.com/towergo/tower/towerredis/internal/mono"
)

// ErrLimited is wrapped by the error of a [Keyed]'s Call refused for
// want of a token of its key: a [*LimitedError].
var ErrLimited = errors.New("towerredis: rate limit exceeded")

// ErrEmptyKey is the error of a [Keyed]'s Call whose key function
// returned "": a bug in the key function, which the limit does not guess
// around by sharing one bucket among such requests.
var ErrEmptyKey = errors.New("towerredis: the key function returned an empty key")

// A LimitedError is the error of a [Keyed]'s Call refused for want of
// a token of its key. It wraps [ErrLimited], and Err if there is one.
//
// When Redis answered (Err is nil), it answers [tower.IsThrottled], and
// not [tower.IsOverloaded], as package limit's per-key refusal does: the
// caller was refused for its own rate, not because the service was busy,
// and another key's request would have gone through; so package towerhttp
// answers 429, and metrics.OutcomeOf says OutcomeThrottled. When Redis did
// not answer and the limit fails closed (Err is the round trip's error),
// it answers IsOverloaded and not IsThrottled: the caller did nothing
// wrong, and the same request may succeed later.
type LimitedError struct {
	// Name is the limit's name, Key the request's key.
	Name, Key string
	// Wait is how long until the key's next token, as Redis saw it (zero
	// when Redis did not answer). Package towerhttp sends it as
	// Retry-After (see [tower.RetryAfter]).
	Wait time.Duration
	// Err is nil when Redis answered that the key has no token; under
	// FailClosed, it is the error of the round trip that did not answer.
	Err error
}

func (e *LimitedError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%v: limit %q, key %q: Redis unreachable, failing closed: %v", ErrLimited, e.Name, e.Key, e.Err)
	}
	return fmt.Sprintf("%v: limit %q, key %q: next token in %v", ErrLimited, e.Name, e.Key, e.Wait)
}

// RetryAfter returns Wait, for [tower.RetryAfter]: zero, which says
// nothing, when Redis did not answer.
func (e *LimitedError) RetryAfter() time.Duration { return e.Wait }

// Unwrap returns ErrLimited, and Err if there is one.
func (e *LimitedError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrLimited, e.Err}
	}
	return []error{ErrLimited}
}

// Overloaded reports whether Redis did not answer (Err is not nil).
func (e *LimitedError) Overloaded() bool { return e.Err != nil }

// Throttled reports whether Redis answered that the key sent more than
// its rate (Err is nil).
func (e *LimitedError) Throttled() bool { return e.Err == nil }

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
// with a [*LimitedError] that answers [tower.IsThrottled], or, with
// [WithMaxWait], reserves the key's next token if it is due within that
// wait and before the Call's ctx's deadline, and waits for it in Call,
// holding the inner permit; if ctx ends while it waits, Call returns
// ctx.Err(), and the token goes back to the key's bucket (one more round
// trip) if no request of the key reserved one after it; otherwise it is
// lost, since the waiter behind holds the instant after it. These are the semantics of package limit's per-key limit
// (limit.Keyed), kept here for the fleet: a per-key wait happens in Call,
// after the request was built, and is bounded; see limit.Keyed for why a
// waiting Call holds the inner permit, and why the default is not to wait.
//
// Redis unreachable: FailOpen calls the inner service; FailClosed asks
// again after the retry interval, within the wait WithMaxWait allows,
// then refuses with a LimitedError that wraps the round trip's error. A
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
// under the given name. Options: [WithTimeout], [WithFailMode],
// [WithRetryInterval], [WithPrefix], [WithMetrics], [WithObserver],
// [WithMaxWait].
//
// It panics, naming the parameter, as [NewBucket] does, and if key is nil,
// or an option does not apply to a Keyed ([WithBatch]: the tokens of
// a key are too few per replica to batch; [WithPollInterval]).
func NewKeyed[Req, Res any](inner tower.Service[Req, Res], client redis.Scripter, name string, key func(Req) string, num int, per time.Duration, burst int, opts ...Option) *Keyed[Req, Res] {
	return newKeyed("towerredis.NewKeyed", inner, client, name, key, num, per, burst, opts)
}

func newKeyed[Req, Res any](fn string, inner tower.Service[Req, Res], client redis.Scripter, name string, key func(Req) string, num int, per time.Duration, burst int, opts []Option) *Keyed[Req, Res] {
	if isnil.Is(inner) {
		panic(fn + ": inner is nil")
	}
	if key == nil {
		panic(fn + ": key is nil")
	}
	o := newOptions(fn, opts)
	if o.batch != 0 {
		panic(fn + ": WithBatch applies to a Bucket only: the tokens of one key are too few per replica to batch")
	}
	if o.poll != 0 {
		panic(fn + ": WithPollInterval applies to a concurrency limit only")
	}
	return &Keyed[Req, Res]{
		inner: inner, b: newGCRA(fn, client, name, num, per, burst, o),
		key: key, prefix: o.prefix + ":rate:" + name + ":{",
	}
}

// NewKeyedLayer returns a Layer that wraps each service in a
// [NewKeyed] limit with these arguments: every service it wraps
// shares the buckets of name. It panics as NewKeyed does.
func NewKeyedLayer[Req, Res any](client redis.Scripter, name string, key func(Req) string, num int, per time.Duration, burst int, opts ...Option) tower.Layer[Req, Res] {
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
// within ctx.
func (r *Keyed[Req, Res]) admit(ctx context.Context, k string) error {
	keys := []string{r.Key(k)}
	end := mono.Now() + r.b.o.maxWait
	if d, ok := ctx.Deadline(); ok {
		end = min(end, mono.Now()+time.Until(d))
	}
	var w watch
	defer w.done(r.b.o.sink)
	for {
		g, err := r.b.ask(ctx, keys, 1, end-mono.Now())
		if err != nil {
			if errors.Is(err, ErrBadReply) {
				return err
			}
			if r.b.o.fail == FailOpen {
				return nil
			}
			if end-mono.Now() < r.b.o.retry {
				return &LimitedError{Name: r.b.name, Key: k, Err: err}
			}
			w.start(r.b.o.sink)
			if !sleep(ctx, r.b.o.retry) {
				return ctx.Err()
			}
			continue
		}
		if g.n == 0 {
			if r.b.o.sink != nil {
				r.b.o.sink.Add(metrics.Throttled, 1)
			}
			return &LimitedError{Name: r.b.name, Key: k, Wait: g.due - g.at}
		}
		if !sleepUntil(ctx, g.due, &w, r.b.o.sink) {
			r.b.giveBack(keys, 1, g.tat)
			return ctx.Err()
		}
		return nil
	}
}
