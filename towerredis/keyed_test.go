package towerredis_test

import (
	"context"
	"errors"
	"github.com/towergo/tower/towerredis"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerredis/redistest"
)

func newTestKeyed(t *testing.T, addr string, num int, per time.Duration, burst int, opts ...towerredis.KeyedOption) (*towerredis.Keyed[string, string], *counting, *trips) {
	t.Helper()
	inner, rt := &counting{}, &trips{}
	opts = append([]towerredis.KeyedOption{towerredis.WithObserver(rt.Observe), towerredis.WithTimeout(time.Second)}, opts...)
	key := func(req string) string { return req }
	return towerredis.NewKeyed[string, string](inner, newClient(t, addr), "keyed", key, num, per, burst, opts...), inner, rt
}

// A Keyed's Ready is its inner service's, with no round trip; Call
// takes a token of the request's key in one round trip, and refuses at
// once, with limit.Keyed's *limit.KeyLimitError, which answers
// IsThrottled (and not IsOverloaded) and says when the key's next token
// comes, when the key has none, counted as Throttled in the metrics; the inner
// permit is released and the inner service not called. Keys are
// independent, and each has its own Redis key, hash-tagged by the key,
// which expires when its bucket is full again.
func TestKeyedRefuses(t *testing.T) {
	srv := redistest.Start(t)
	var counts metrics.Counts
	r, inner, rt := newTestKeyed(t, srv.Addr(), 1, 10*time.Second, 2, towerredis.WithMetrics(&counts))
	for i := range 2 {
		if _, err := tower.Call[string, string](t.Context(), r, "alice"); err != nil {
			t.Fatalf("alice's request %d: %v, want served from her burst of 2", i, err)
		}
	}
	p := mustReady(t, t.Context(), r)
	if n := rt.N.Load(); n != 2 {
		t.Errorf("%d round trips after 2 calls and a Ready, want 2: Ready makes none", n)
	}
	start := time.Now()
	_, err := p.Call(t.Context(), "alice")
	within(t, "the refusal", time.Since(start), 0, slack)
	var le *limit.KeyLimitError
	if !errors.As(err, &le) || !errors.Is(err, limit.ErrKeyLimited) || tower.IsOverloaded(err) || !tower.IsThrottled(err) {
		t.Fatalf("alice's third request: %v, want a KeyLimitError that wraps ErrKeyLimited, throttled, not overloaded", err)
	}
	if d, ok := tower.RetryAfter(err); !ok || d != le.Wait {
		t.Errorf("RetryAfter = %v, %t; want the KeyLimitError's Wait %v", d, ok, le.Wait)
	}
	if want := `towerredis: limit "keyed", key "alice": request throttled: key over its rate limit; next token in `; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("the refusal says %q, want it to begin %q", err, want)
	}
	if n := counts.Get(metrics.Throttled); n != 1 {
		t.Errorf("Throttled = %d, want 1", n)
	}
	if le.Wait < 9*time.Second || le.Wait > 10*time.Second {
		t.Errorf("KeyLimitError = %+v, want the next token in just under 10s", le)
	}
	if _, err := tower.Call[string, string](t.Context(), r, "bob"); err != nil {
		t.Errorf("bob's request: %v, want served: keys are independent", err)
	}
	if n, o := inner.Calls.Load(), inner.Outstanding.Load(); n != 3 || o != 0 {
		t.Errorf("inner service got %d calls, %d outstanding; want 3, 0", n, o)
	}
	c := newClient(t, srv.Addr())
	if k := r.Key("alice"); k != "tower:rate:keyed:{alice}" {
		t.Errorf("Key(alice) = %q, want tower:rate:keyed:{alice}", k)
	}
	if ttl, err := c.PTTL(t.Context(), r.Key("alice")).Result(); err != nil || ttl <= 19*time.Second || ttl > 20*time.Second {
		t.Errorf("alice's key lives %v (%v), want just under 20s: until her bucket is full again", ttl, err)
	}
}

// With WithMaxWait, a Call reserves its key's next token if it comes
// within the wait, and waits for it; beyond, it refuses at once; the
// Call's ctx bounds the wait too.
func TestKeyedMaxWait(t *testing.T) {
	srv := redistest.Start(t)
	r, inner, rt := newTestKeyed(t, srv.Addr(), 5, time.Second, 1, towerredis.WithMaxWait(250*time.Millisecond))
	start := time.Now()
	if _, err := tower.Call[string, string](t.Context(), r, "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := tower.Call[string, string](t.Context(), r, "k"); err != nil {
		t.Fatalf("second call: %v, want served after waiting for the next token", err)
	}
	within(t, "the second call", time.Since(start), 200*time.Millisecond, 200*time.Millisecond+slack)
	if n := rt.N.Load(); n != 2 {
		t.Errorf("%d round trips for 2 calls, want 2", n)
	}
	// The next token is 200ms away: a caller whose ctx ends before is
	// refused at once.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := tower.Call[string, string](ctx, r, "k"); !tower.IsThrottled(err) {
		t.Errorf("a call whose ctx ends before the next token: %v, want refused at once, not ctx's error", err)
	}
	// Another replica reserves the next token; the one after, 400ms
	// away, is beyond the max wait.
	// It dials its own connection, so it has the test's timeout of a
	// second, and r calls once its round trip is over, not after a sleep
	// that a busy machine can outlast.
	reserved := make(chan struct{})
	var once sync.Once
	r2 := towerredis.NewKeyed[string, string](inner, newClient(t, srv.Addr()), "keyed", func(s string) string { return s }, 5, time.Second, 1,
		towerredis.WithMaxWait(250*time.Millisecond), towerredis.WithTimeout(time.Second), towerredis.WithObserver(func(towerredis.RoundTrip) { once.Do(func() { close(reserved) }) }))
	hold := make(chan error, 1)
	go func() {
		_, err := tower.Call[string, string](t.Context(), r2, "k")
		hold <- err
	}()
	<-reserved
	if _, err := tower.Call[string, string](t.Context(), r, "k"); !tower.IsThrottled(err) {
		t.Errorf("a call whose token is beyond the max wait: %v, want refused", err)
	}
	if err := <-hold; err != nil {
		t.Errorf("the caller that reserved the next token: %v, want served", err)
	}
	if n := inner.Outstanding.Load(); n != 0 {
		t.Errorf("inner service has %d permits outstanding, want 0", n)
	}
}

// An empty key is refused with ErrEmptyKey; a key function that panics
// panics in Call, with the inner permit released.
func TestKeyedBadKeys(t *testing.T) {
	srv := redistest.Start(t)
	inner := &counting{}
	r := towerredis.NewKeyed[string, string](inner, newClient(t, srv.Addr()), "k", func(req string) string {
		if req == "panic" {
			panic("key function panicked")
		}
		return req
	}, 1, time.Second, 1)
	if _, err := tower.Call[string, string](t.Context(), r, ""); !errors.Is(err, towerredis.ErrEmptyKey) {
		t.Errorf("empty key: %v, want ErrEmptyKey", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a key function that panics: Call did not panic")
			}
		}()
		tower.Call[string, string](t.Context(), r, "panic")
	}()
	if n, o := inner.Calls.Load(), inner.Outstanding.Load(); n != 0 || o != 0 {
		t.Errorf("inner service got %d calls, %d outstanding; want 0, 0", n, o)
	}
}

// Redis unreachable: FailOpen calls the inner service; FailClosed refuses
// at once, after one round trip, even with a max wait, with an
// *UnreachableError wrapping the round trip's error, which answers
// IsOverloaded and neither IsThrottled nor IsTimeout; a bad reply refuses
// with ErrBadReply.
func TestKeyedFailModes(t *testing.T) {
	addr := closedPort(t)
	open, inner, _ := newTestKeyed(t, addr, 1, time.Second, 1)
	if _, err := tower.Call[string, string](t.Context(), open, "k"); err != nil || inner.Calls.Load() != 1 {
		t.Errorf("FailOpen: %v, %d calls; want served", err, inner.Calls.Load())
	}
	closed, inner, rt := newTestKeyed(t, addr, 1, time.Second, 1, towerredis.WithFailMode(towerredis.FailClosed),
		towerredis.WithMaxWait(time.Minute), towerredis.WithTimeout(20*time.Millisecond))
	_, err := tower.Call[string, string](t.Context(), closed, "k")
	var ue *towerredis.UnreachableError
	if !errors.As(err, &ue) || ue.Err == nil || !errors.Is(err, towerredis.ErrUnreachable) ||
		!tower.IsOverloaded(err) || tower.IsThrottled(err) || tower.IsTimeout(err) {
		t.Errorf("FailClosed: %v, want an UnreachableError with the round trip's error, overloaded, neither throttled nor timed out", err)
	}
	if n := rt.N.Load(); n != 1 || inner.Calls.Load() != 0 {
		t.Errorf("FailClosed: %d round trips, %d calls; want 1, 0", n, inner.Calls.Load())
	}

	srv := redistest.Start(t)
	bad, inner, _ := newTestKeyed(t, srv.Addr(), 1, time.Second, 1)
	newClient(t, srv.Addr()).RPush(t.Context(), bad.Key("k"), "x")
	if _, err := tower.Call[string, string](t.Context(), bad, "k"); !errors.Is(err, towerredis.ErrBadReply) || inner.Calls.Load() != 0 {
		t.Errorf("a key of another type: %v, %d calls; want ErrBadReply and no call", err, inner.Calls.Load())
	}
}

// A Call whose ctx ends while it waits for its key's reserved token gives
// the token back, as limit.Keyed does: the next Call gets it at its
// instant, not one interval later.
func TestKeyedGivesBackOnCancel(t *testing.T) {
	srv := redistest.Start(t)
	r, inner, _ := newTestKeyed(t, srv.Addr(), 4, time.Second, 1, towerredis.WithMaxWait(time.Second))
	start := time.Now()
	if _, err := tower.Call[string, string](t.Context(), r, "k"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := tower.Call[string, string](ctx, r, "k"); err != context.Canceled {
		t.Fatalf("a Call cancelled while it waits: %v, want %v", err, context.Canceled)
	}
	if _, err := tower.Call[string, string](t.Context(), r, "k"); err != nil {
		t.Fatal(err)
	}
	within(t, "the token given back", time.Since(start), 250*time.Millisecond, 250*time.Millisecond+slack)
	if n, o := inner.Calls.Load(), inner.Outstanding.Load(); n != 2 || o != 0 {
		t.Errorf("inner service got %d calls, %d outstanding; want 2, 0", n, o)
	}
}
