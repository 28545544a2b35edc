package limit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// ident makes each request its own key.
func ident(req string) string { return req }

type keyed = limit.Keyed[string, string, string]

// expectRefused sends key through s and fails t unless it is refused at
// once with a *KeyLimitError whose RetryAfter is want.
func expectRefused(t *testing.T, s svc, key string, want time.Duration) {
	t.Helper()
	start := time.Now()
	_, err := tower.Call(t.Context(), s, key)
	e, ok := errors.AsType[*limit.KeyLimitError](err)
	if !ok || e.Wait != want {
		t.Fatalf("key %q: got %v, want a *KeyLimitError with RetryAfter %v", key, err, want)
	}
	if d := time.Since(start); d != 0 {
		t.Fatalf("key %q: refused after %v, want at once", key, d)
	}
}

// A key's bucket starts full with burst tokens, and gains one every
// per/num exactly: not a nanosecond sooner, and never more than burst.
func TestKeyedBurstThenExactRefill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := limit.NewKeyed[string, string](echo, ident, 10, time.Second, 3)
		for range 3 {
			callNow(t, k, "a")
		}
		expectRefused(t, k, "a", 100*time.Millisecond)
		time.Sleep(100*time.Millisecond - 1)
		expectRefused(t, k, "a", 1)
		time.Sleep(time.Nanosecond)
		callNow(t, k, "a") // at 100ms
		expectRefused(t, k, "a", 100*time.Millisecond)
		time.Sleep(300 * time.Millisecond) // full again at 400ms
		for range 3 {
			callNow(t, k, "a")
		}
		expectRefused(t, k, "a", 100*time.Millisecond)
		time.Sleep(time.Hour) // idle: still burst tokens, no more
		for range 3 {
			callNow(t, k, "a")
		}
		expectRefused(t, k, "a", 100*time.Millisecond)
	})
}

// 3 per second is a token every 333,333,334ns: the rate is rounded down,
// never up.
func TestKeyedIntervalRoundsUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := limit.NewKeyed[string, string](echo, ident, 3, time.Second, 1)
		callNow(t, k, "a")
		expectRefused(t, k, "a", 333333334)
	})
}

// Keys are independent: one key's requests never use another's tokens.
func TestKeyedKeysIndependent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := limit.NewKeyed[string, string](echo, ident, 1, time.Second, 2)
		callNow(t, k, "a")
		callNow(t, k, "a")
		expectRefused(t, k, "a", time.Second)
		callNow(t, k, "b")
		callNow(t, k, "b")
		expectRefused(t, k, "b", time.Second)
		time.Sleep(500 * time.Millisecond)
		callNow(t, k, "c")
		expectRefused(t, k, "a", 500*time.Millisecond)
		expectRefused(t, k, "b", 500*time.Millisecond)
	})
}

// The key is what the key function draws from the request, not the
// request: two requests of one key share its bucket.
func TestKeyedKeyFunction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tenant := func(req string) string { return strings.SplitN(req, "/", 2)[0] }
		k := limit.NewKeyed[string, string](echo, tenant, 1, time.Second, 1)
		callNow(t, k, "acme/x")
		expectRefused(t, k, "acme/y", time.Second)
		callNow(t, k, "globex/x")
	})
}

// A refusal answers tower.IsThrottled and not tower.IsOverloaded, matches
// ErrKeyLimited, and says when the next token comes.
func TestKeyedErrorIsThrottled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := limit.NewKeyed[string, string](echo, ident, 4, time.Second, 1)
		callNow(t, k, "a")
		_, err := tower.Call(t.Context(), k, "a")
		if !tower.IsThrottled(err) || tower.IsOverloaded(err) || tower.IsUnavailable(err) {
			t.Errorf("got IsThrottled %t, IsOverloaded %t, IsUnavailable %t; want true, false, false",
				tower.IsThrottled(err), tower.IsOverloaded(err), tower.IsUnavailable(err))
		}
		if !errors.Is(err, limit.ErrKeyLimited) {
			t.Errorf("got %v, want one that matches ErrKeyLimited", err)
		}
		if got := metrics.OutcomeOf(err); got != metrics.OutcomeThrottled {
			t.Errorf("OutcomeOf: got %v, want %v", got, metrics.OutcomeThrottled)
		}
		if got, want := err.Error(), "request throttled: key over its rate limit; next token in 250ms"; got != want {
			t.Errorf("message: got %q, want %q", got, want)
		}
		if !tower.IsThrottled(limit.ErrKeyLimited) || limit.ErrKeyLimited.Error() != "request throttled: key over its rate limit" {
			t.Errorf("ErrKeyLimited: got %q, throttled %t", limit.ErrKeyLimited, tower.IsThrottled(limit.ErrKeyLimited))
		}
	})
}

// A refused Call gives the inner permit back unused and sends nothing;
// a permit of the Keyed released unused takes no token.
func TestKeyedRefusalGivesInnerPermitBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		k := limit.NewKeyed[string, string](mock, ident, 1, time.Second, 1)
		p := towertest.MustReady(t, k)
		p.Release() // takes no token: "a" still has its one
		h.ExpectOutstanding(t, 0)
		towertest.CallThrough(t, towertest.MustReady(t, k), h, "a", "ok")
		p = towertest.MustReady(t, k)
		h.ExpectOutstanding(t, 1)
		if _, err := p.Call(t.Context(), "a"); !errors.Is(err, limit.ErrKeyLimited) {
			t.Fatalf("got %v, want ErrKeyLimited", err)
		}
		h.ExpectOutstanding(t, 0)
		h.ExpectIdle(t, 1)
	})
}

// Keyed > Concurrency: waiting for the concurrency permit happens in Ready,
// where the done-ctx probe sees it; waiting for the key's token happens in
// Call, holding the permit, so a second caller waits in Ready until the
// first one's call is over.
func TestKeyedOverConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := limit.NewConcurrency[string, string](echo, 1)
		k := limit.NewKeyed[string, string](c, ident, 10, time.Second, 1, limit.WithMaxWait(time.Second))
		start := time.Now()
		callNow(t, k, "a") // a's next token is at 100ms
		p := towertest.MustReady(t, k)
		if p, ok := towertest.ReadyNow(t, k); ok {
			p.Release()
			t.Fatal("ReadyNow with the concurrency permit taken: got ready, want not ready")
		}
		first := towertest.GoCall(t.Context(), p, "a") // waits for a's token
		first.ExpectPending(t)
		if n := c.Semaphore().Available(); n != 0 {
			t.Fatalf("while the call waits for its key: %d permits free, want 0 (it holds its permit)", n)
		}
		second := towertest.GoReady(t.Context(), k) // waits for the permit
		second.ExpectPending(t)
		first.ExpectValue(t, "a")
		if d := first.Since(start); d != 100*time.Millisecond {
			t.Errorf("first call answered at %v, want 100ms, when a's token came", d)
		}
		p = second.Value(t)
		if d := second.Since(start); d != 100*time.Millisecond {
			t.Errorf("second Ready returned at %v, want 100ms, when the permit came back", d)
		}
		echoCall(t, p, "b") // b's token is there
	})
}

// With a max wait, a Call waits exactly until its key's token; one whose
// token is further than the max wait is refused at once, reserving
// nothing; one whose ctx ends while it waits gives its token back, so that
// the next caller's token comes as soon as if it had never asked.
func TestKeyedMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := limit.NewKeyed[string, string](echo, ident, 10, time.Second, 1, limit.WithMaxWait(250*time.Millisecond))
		start := time.Now()
		callNow(t, k, "a")                            // the next token at 100ms
		b := towertest.GoRequest(t.Context(), k, "a") // reserves it
		ctx, cancel := context.WithCancel(t.Context())
		c := towertest.GoRequest(ctx, k, "a") // reserves the one at 200ms
		c.ExpectPending(t)
		expectRefused(t, k, "a", 300*time.Millisecond) // beyond 250ms: refused
		time.Sleep(50 * time.Millisecond)
		cancel()
		c.ExpectError(t, context.Canceled)
		if d := c.Since(start); d != 50*time.Millisecond {
			t.Errorf("cancelled waiter returned at %v, want 50ms", d)
		}
		b.ExpectValue(t, "a")
		if d := b.Since(start); d != 100*time.Millisecond {
			t.Errorf("first waiter answered at %v, want 100ms", d)
		}
		e := towertest.GoRequest(t.Context(), k, "a") // gets the token given back
		e.ExpectValue(t, "a")
		if d := e.Since(start); d != 200*time.Millisecond {
			t.Errorf("waiter after the cancelled one answered at %v, want 200ms", d)
		}
	})
}

// The max wait is inclusive: a token exactly that far away is waited for,
// one a nanosecond further is refused.
func TestKeyedMaxWaitBoundary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := limit.NewKeyed[string, string](echo, ident, 10, time.Second, 1, limit.WithMaxWait(100*time.Millisecond))
		callNow(t, k, "a")
		b := towertest.GoRequest(t.Context(), k, "a")
		b.ExpectPending(t)
		expectRefused(t, k, "a", 200*time.Millisecond)
		b.ExpectValue(t, "a")
		if d := b.Elapsed(); d != 100*time.Millisecond {
			t.Errorf("waiter answered after %v, want 100ms", d)
		}
		// At 100ms, the next token is 100ms away: waited for.
		c := towertest.GoRequest(t.Context(), k, "a")
		c.ExpectPending(t)
		time.Sleep(100*time.Millisecond - 1) // the next token is 100ms+1ns away
		expectRefused(t, k, "a", 100*time.Millisecond+1)
		c.ExpectValue(t, "a")
		if d := c.Elapsed(); d != 100*time.Millisecond {
			t.Errorf("second waiter answered after %v, want 100ms", d)
		}
	})
}

// A ctx whose deadline comes before the key's token is refused at once,
// reserving nothing; a deadline a nanosecond after it waits.
func TestKeyedMaxWaitDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := limit.NewKeyed[string, string](echo, ident, 10, time.Second, 1, limit.WithMaxWait(time.Second))
		callNow(t, k, "a")
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond-1)
		defer cancel()
		expectRefusedCtx(t, ctx, k, "a", 100*time.Millisecond)
		ctx, cancel = context.WithTimeout(t.Context(), 100*time.Millisecond+1)
		defer cancel()
		r := towertest.GoRequest(ctx, k, "a")
		r.ExpectValue(t, "a")
		if d := r.Elapsed(); d != 100*time.Millisecond {
			t.Errorf("answered after %v, want 100ms", d)
		}
	})
}

func expectRefusedCtx(t *testing.T, ctx context.Context, s svc, key string, want time.Duration) {
	t.Helper()
	_, err := tower.Call(ctx, s, key)
	if e, ok := errors.AsType[*limit.KeyLimitError](err); !ok || e.Wait != want {
		t.Fatalf("got %v, want a *KeyLimitError with RetryAfter %v", err, want)
	}
}

// A token there is taken even with a done ctx; a Call that would wait
// with a done ctx (cancelled, no deadline) returns ctx.Err() at once and
// keeps no token.
func TestKeyedDoneContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := limit.NewKeyed[string, string](echo, ident, 10, time.Second, 1, limit.WithMaxWait(time.Second))
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if res, err := tower.Call(ctx, k, "a"); err != nil || res != "a" {
			t.Fatalf("token there, done ctx: got %q, %v; want %q, nil", res, err, "a")
		}
		if _, err := tower.Call(ctx, k, "a"); err != context.Canceled {
			t.Fatalf("token 100ms away, done ctx: got %v, want %v", err, context.Canceled)
		}
		r := towertest.GoRequest(t.Context(), k, "a")
		r.ExpectValue(t, "a")
		if d := r.Elapsed(); d != 100*time.Millisecond {
			t.Errorf("next caller answered after %v, want 100ms: the token was given back", d)
		}
		// A deadline passed: the token there is taken, the next refused.
		time.Sleep(100 * time.Millisecond)
		ctx, cancel = context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
		defer cancel()
		if res, err := tower.Call(ctx, k, "a"); err != nil || res != "a" {
			t.Fatalf("token there, deadline passed: got %q, %v; want %q, nil", res, err, "a")
		}
		expectRefusedCtx(t, ctx, k, "a", 100*time.Millisecond)
	})
}

// Idle keys are dropped: a key whose bucket is full again is deleted by
// the sweep of later requests, two entries per request, never one that
// is not full.
func TestKeyedIdleKeysDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := limit.NewKeyed[string, string](echo, ident, 10, time.Second, 1, limit.WithMaxKeys(100))
		keys := []string{"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"}
		for _, key := range keys {
			callNow(t, k, key)
		}
		if n := k.Len(); n != 10 {
			t.Fatalf("after 10 keys: Len %d, want 10", n)
		}
		time.Sleep(100*time.Millisecond - 1) // a nanosecond before they are full
		for range 20 {
			expectRefused(t, k, "k0", 1)
		}
		if n := k.Len(); n != 10 {
			t.Fatalf("1ns before the buckets are full: Len %d, want 10", n)
		}
		time.Sleep(time.Nanosecond)
		callNow(t, k, "k0")
		if n := k.Len(); n < 8 || n > 9 {
			t.Fatalf("after one request: Len %d, want 8 or 9 (two entries checked)", n)
		}
		for range 10 {
			expectRefused(t, k, "k0", 100*time.Millisecond)
		}
		if n := k.Len(); n != 1 || !limit.KeyedHolds(k, "k0") {
			t.Fatalf("after 11 requests: Len %d, holds k0 %t; want 1, true", n, limit.KeyedHolds(k, "k0"))
		}
		time.Sleep(100 * time.Millisecond)
		callNow(t, k, "new") // k0 is full again: dropped
		if n := k.Len(); n != 1 || !limit.KeyedHolds(k, "new") {
			t.Fatalf("k0 idle: Len %d, holds new %t; want 1, true", n, limit.KeyedHolds(k, "new"))
		}
	})
}

// At the cap, a new key gets in with its full burst and deletes the key
// nearest full; a key whose debt was so forgiven comes back with a full
// bucket.
func TestKeyedCapPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := limit.NewKeyed[string, string](echo, ident, 10, time.Second, 10, limit.WithMaxKeys(4))
		for key, n := range map[string]int{"a": 4, "b": 3, "c": 1, "d": 2} {
			for range n {
				callNow(t, k, key)
			}
		}
		time.Sleep(50 * time.Millisecond) // c owes 50ms, d 150ms, b 250ms, a 350ms
		callNow(t, k, "e")
		holds := func(want ...string) {
			t.Helper()
			for _, key := range []string{"a", "b", "c", "d", "e"} {
				got := limit.KeyedHolds(k, key)
				if got != strings.Contains(strings.Join(want, ""), key) {
					t.Fatalf("holds %q: %t; want keys %v", key, got, want)
				}
			}
			if n := k.Len(); n != len(want) {
				t.Fatalf("Len %d, want %d", n, len(want))
			}
		}
		holds("a", "b", "d", "e")
		// c comes back with a full bucket of 10, where it had 9 due; it
		// deletes e, which owes only the 100ms of its one token.
		for range 10 {
			callNow(t, k, "c")
		}
		expectRefused(t, k, "c", 100*time.Millisecond)
		holds("a", "b", "c", "d")
		// d, kept, has exactly what it is due: 8 tokens and 50ms.
		for range 8 {
			callNow(t, k, "d")
		}
		expectRefused(t, k, "d", 50*time.Millisecond)
		time.Sleep(time.Second) // all full again: a new key takes a full one's place
		callNow(t, k, "f")
		if n := k.Len(); n > 4 {
			t.Fatalf("Len %d, want at most 4", n)
		}
	})
}

// A panic in the key function goes up to the caller of Call, and the
// inner permit is given back; nothing reaches the inner service.
func TestKeyedKeyPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		boom := func(string) string { panic("boom") }
		k := limit.NewKeyed[string, string](mock, boom, 1, time.Second, 1)
		p := towertest.MustReady(t, k)
		func() {
			defer func() {
				if v := recover(); v != "boom" {
					t.Errorf("recovered %v, want %q", v, "boom")
				}
			}()
			p.Call(t.Context(), "a")
		}()
		h.ExpectOutstanding(t, 0)
		h.ExpectIdle(t, 0)
	})
}

// Each service a layer wraps gets a table of its own.
func TestKeyedLayer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		layer := limit.NewKeyedLayer[string, string](ident, 1, time.Second, 1)
		one, two := layer.Wrap(echo), layer.Wrap(echo)
		callNow(t, one, "a")
		callNow(t, two, "a")
		expectRefused(t, one, "a", time.Second)
		expectRefused(t, two, "a", time.Second)
		if n := one.(*keyed).Len(); n != 1 {
			t.Errorf("Len %d, want 1", n)
		}
	})
}

// Bad input panics at construction, naming the function and the
// parameter.
func TestKeyedBadInput(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"nil inner", func() { limit.NewKeyed[string, string](nil, ident, 1, time.Second, 1) }, "limit.NewKeyed: inner is nil"},
		{"typed nil inner", func() {
			limit.NewKeyed[string, string](svc((*limit.Concurrency[string, string])(nil)), ident, 1, time.Second, 1)
		}, "limit.NewKeyed: inner is nil"},
		{"nil key", func() { limit.NewKeyed[string, string, string](echo, nil, 1, time.Second, 1) }, "limit.NewKeyed: key is nil"},
		{"num 0", func() { limit.NewKeyed[string, string](echo, ident, 0, time.Second, 1) }, "limit.NewKeyed: num must be at least 1, got 0"},
		{"per 0", func() { limit.NewKeyed[string, string](echo, ident, 1, 0, 1) }, "limit.NewKeyed: per must be positive, got 0s"},
		{"num > per", func() { limit.NewKeyed[string, string](echo, ident, 2, 1, 1) }, "limit.NewKeyed: num must be at most per in nanoseconds"},
		{"burst 0", func() { limit.NewKeyed[string, string](echo, ident, 1, time.Second, 0) }, "limit.NewKeyed: burst must be at least 1, got 0"},
		{"nil option", func() { limit.NewKeyed[string, string](echo, ident, 1, time.Second, 1, nil) }, "limit.NewKeyed: option 0 is nil"},
		{"layer nil key", func() { limit.NewKeyedLayer[string, string, string](nil, 1, time.Second, 1) }, "limit.NewKeyedLayer: key is nil"},
		{"layer burst -1", func() { limit.NewKeyedLayer[string, string](ident, 1, time.Second, -1) }, "limit.NewKeyedLayer: burst must be at least 1, got -1"},
		{"layer nil option", func() { limit.NewKeyedLayer[string, string](ident, 1, time.Second, 1, limit.WithMaxKeys(1), nil) }, "limit.NewKeyedLayer: option 1 is nil"},
		{"max keys 0", func() { limit.WithMaxKeys(0) }, "limit.WithMaxKeys: n must be at least 1, got 0"},
		{"max wait -1ns", func() { limit.WithMaxWait(-1) }, "limit.WithMaxWait: d must not be negative, got -1ns"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if msg, _ := recover().(string); !strings.HasPrefix(msg, c.want) {
					t.Errorf("panicked %q, want %q", msg, c.want)
				}
			}()
			c.f()
		})
	}
	// The bounds themselves are good input.
	limit.WithMaxKeys(1)
	limit.WithMaxWait(0)
}

func TestKeyedConformance(t *testing.T) {
	for _, tt := range []struct {
		name  string
		layer func() tower.Layer[string, string]
	}{
		{"BurstNeverReached", func() tower.Layer[string, string] {
			return limit.NewKeyedLayer[string, string](ident, 1, time.Second, 1<<20)
		}},
		// Eight concurrent callers of one key, one token per 100ms: all
		// but the first wait in Call for theirs.
		{"OnePer100msWaiting", func() tower.Layer[string, string] {
			return limit.NewKeyedLayer[string, string](ident, 1, 100*time.Millisecond, 1, limit.WithMaxWait(time.Second))
		}},
		{"OneKeyCap", func() tower.Layer[string, string] {
			return limit.NewKeyedLayer[string, string](ident, 1, time.Millisecond, 1, limit.WithMaxKeys(1), limit.WithMaxWait(time.Second))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{NewLayer: tt.layer, Request: "hello", Response: "world"}.Run(t)
		})
	}
}

// The sink hears of each refusal (Throttled) and of each wait in Call
// (Waiting, +1 then -1), and of nothing else.
func TestKeyedMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := new(metrics.Counts)
		k := limit.NewKeyed[string, string](echo, ident, 10, time.Second, 1,
			limit.WithMaxWait(100*time.Millisecond), limit.WithKeyedMetrics(c))
		start := time.Now()
		callNow(t, k, "a")
		countsAt(t, start, 0, c, metrics.Snapshot{})
		w := towertest.GoRequest(t.Context(), k, "a")
		countsAt(t, start, 0, c, metrics.Snapshot{Waiting: 1})
		expectRefused(t, k, "a", 200*time.Millisecond)
		expectRefused(t, k, "a", 200*time.Millisecond)
		countsAt(t, start, 100*time.Millisecond-1, c, metrics.Snapshot{Waiting: 1, Throttled: 2})
		w.ExpectValue(t, "a")
		countsAt(t, start, 100*time.Millisecond, c, metrics.Snapshot{Throttled: 2})
		// A nil sink is no metrics.
		k = limit.NewKeyed[string, string](echo, ident, 10, time.Second, 1, limit.WithKeyedMetrics(nil))
		callNow(t, k, "a")
		expectRefused(t, k, "a", 100*time.Millisecond)
	})
}

// keyedPanicSink panics when it is told delta of kind.
type keyedPanicSink struct {
	metrics.Counts
	kind  metrics.Kind
	delta int64
}

func (s *keyedPanicSink) Add(k metrics.Kind, delta int64) {
	if k == s.kind && delta == s.delta {
		panic("sink")
	}
	s.Counts.Add(k, delta)
}

// A panic in the sink goes up to the caller of Call, with the inner permit
// given back, and a token reserved for a wait given back too.
func TestKeyedSinkPanics(t *testing.T) {
	for _, c := range []struct {
		name  string
		kind  metrics.Kind
		delta int64
	}{
		{"Throttled", metrics.Throttled, 1},
		{"WaitingStarts", metrics.Waiting, 1},
		{"WaitingEnds", metrics.Waiting, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := towertest.NewMock[string, string]()
				maxWait := time.Duration(0)
				if c.kind == metrics.Waiting {
					maxWait = time.Second
				}
				sink := &keyedPanicSink{kind: c.kind, delta: c.delta}
				k := limit.NewKeyed[string, string](mock, ident, 10, time.Second, 1, limit.WithMaxWait(maxWait), limit.WithKeyedMetrics(sink))
				start := time.Now()
				towertest.CallThrough(t, towertest.MustReady(t, k), h, "a", "ok")
				p := towertest.MustReady(t, k)
				func() {
					defer func() {
						if v := recover(); v != "sink" {
							t.Errorf("recovered %v, want %q", v, "sink")
						}
					}()
					p.Call(t.Context(), "a")
				}()
				h.ExpectOutstanding(t, 0)
				h.ExpectIdle(t, 1)
				if c.kind == metrics.Waiting {
					// The token reserved at 100ms went back: the next
					// caller, at 100ms or before, gets it at 100ms.
					sink.kind = 0
					call := towertest.GoCall(t.Context(), towertest.MustReady(t, k), "a")
					h.Expect(t, "a").Respond("ok")
					call.ExpectValue(t, "ok")
					if d := call.Since(start); d != 100*time.Millisecond {
						t.Errorf("next caller served at %v, want 100ms", d)
					}
				}
			})
		})
	}
}

// Many goroutines, many keys, some waiting, some refused: every call is
// answered or refused, and each key lets through exactly what its bucket
// holds.
func TestKeyedConcurrentKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := limit.NewKeyed[string, string](echo, ident, 10, time.Second, 5, limit.WithMaxKeys(1000))
		keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
		var served [8]atomic.Int32
		var wg sync.WaitGroup
		for i := range 8 * 20 {
			wg.Go(func() {
				if _, err := tower.Call(t.Context(), k, keys[i%8]); err == nil {
					served[i%8].Add(1)
				} else if !errors.Is(err, limit.ErrKeyLimited) {
					t.Errorf("got %v, want nil or ErrKeyLimited", err)
				}
			})
		}
		wg.Wait()
		for i := range served {
			if n := served[i].Load(); n != 5 {
				t.Errorf("key %s: %d served at once, want its burst, 5", keys[i], n)
			}
		}
	})
}
