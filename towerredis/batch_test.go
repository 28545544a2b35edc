package towerredis_test

import (
	"fmt"
	"github.com/towergo/tower/towerredis"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/towerredis/redistest"
)

// With WithBatch(n), one round trip takes n tokens, which the replica
// hands out without asking Redis; a permit released unused gives its token
// back to the batch, for free, if it was the last handed out; a probe that
// finds the batch spent asks Redis once.
func TestBucketBatchHandsOutLocally(t *testing.T) {
	srv := redistest.Start(t)
	r, inner, rt := newTestBucket(t, srv.Addr(), "batch", 1, 10*time.Second, 5, towerredis.WithBatch(5))
	probe := func(what string) tower.Permit[string, string] {
		t.Helper()
		p, ok, err := tower.ReadyNow[string, string](r)
		if !ok || err != nil {
			t.Fatalf("%s: ReadyNow = %v, %v; want a token of the batch", what, ok, err)
		}
		return p
	}
	for i := range 4 {
		p := probe(fmt.Sprint("probe ", i))
		p.Call(t.Context(), "x")
	}
	p := probe("the batch's last token")
	p.Release() // the last handed out: back to the batch
	p = probe("the token given back")
	p.Call(t.Context(), "x")
	if n := rt.N.Load(); n != 1 {
		t.Fatalf("after the batch's 5 tokens, one given back and taken again, %d round trips; want 1", n)
	}
	if _, ok, err := tower.ReadyNow[string, string](r); ok || err != nil {
		t.Fatalf("sixth probe: ReadyNow = %v, %v; want not ready", ok, err)
	}
	if n := rt.N.Load(); n != 2 {
		t.Errorf("%d round trips after the sixth probe, want 2", n)
	}
	if n := inner.Outstanding.Load(); n != 0 {
		t.Errorf("inner service has %d permits outstanding, want 0", n)
	}
}

// A batch's tokens are lost if not handed out within the bucket's span of
// the instant they were due: a replica never keeps a token longer than the
// fleet's bucket would have. Here a bucket of 5 tokens, one every 100ms,
// and batches of 5: the batch's tokens are there now, and kept 500ms. The
// third token is asked for 800ms after the batch came in, 300ms past the
// keep, so the outcome holds whatever a busy machine's delays.
func TestBucketBatchKeep(t *testing.T) {
	srv := redistest.Start(t)
	r, _, rt := newTestBucket(t, srv.Addr(), "keep", 10, time.Second, 5, towerredis.WithBatch(5))
	start := time.Now()
	p := mustReady(t, t.Context(), r)
	fetched := time.Now() // after the batch came in
	p.Call(t.Context(), "x")
	p = mustReady(t, t.Context(), r)
	p.Call(t.Context(), "x")
	if time.Since(start) < 400*time.Millisecond {
		if n := rt.N.Load(); n != 1 {
			t.Errorf("2 tokens within the keep took %d round trips, want 1", n)
		}
	}
	time.Sleep(time.Until(fetched.Add(800 * time.Millisecond))) // 300ms past the keep
	p = mustReady(t, t.Context(), r)
	p.Call(t.Context(), "x")
	if n := rt.N.Load(); n != 2 {
		t.Errorf("a token 800ms after the batch: %d round trips in all, want 2: the batch's 3 tokens left are lost after 500ms", n)
	}
}

// Bad input panics at construction, naming the parameter or the option.
func TestBucketPanics(t *testing.T) {
	srv := redistest.Start(t)
	c := newClient(t, srv.Addr())
	off := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer off.Close()
	var typedNil *redis.Client
	key := func(s string) string { return s }
	for _, tt := range []struct {
		want string
		f    func()
	}{
		{"inner is nil", func() { towerredis.NewBucket[string, string](nil, c, "n", 1, time.Second, 1) }},
		{"client is nil", func() { towerredis.NewBucket[string, string](okService, nil, "n", 1, time.Second, 1) }},
		{"client is nil", func() { towerredis.NewBucket[string, string](okService, typedNil, "n", 1, time.Second, 1) }},
		{"ContextTimeoutEnabled", func() { towerredis.NewBucket[string, string](okService, off, "n", 1, time.Second, 1) }},
		{"name is empty", func() { towerredis.NewBucket[string, string](okService, c, "", 1, time.Second, 1) }},
		{"num must be at least 1, got 0", func() { towerredis.NewBucket[string, string](okService, c, "n", 0, time.Second, 1) }},
		{"per must be positive, got 0s", func() { towerredis.NewBucket[string, string](okService, c, "n", 1, 0, 1) }},
		{"per must be positive, got -1s", func() { towerredis.NewBucket[string, string](okService, c, "n", 1, -time.Second, 1) }},
		{"per/num must be at least a microsecond", func() { towerredis.NewBucket[string, string](okService, c, "n", 2, time.Microsecond, 1) }},
		{"per/num must be at least a microsecond", func() { towerredis.NewBucket[string, string](okService, c, "n", 1, 999*time.Nanosecond, 1) }},
		{"burst must be at least 1, got 0", func() { towerredis.NewBucket[string, string](okService, c, "n", 1, time.Second, 0) }},
		{"longer than the script's arithmetic", func() { towerredis.NewBucket[string, string](okService, c, "n", 1, 1<<40*time.Microsecond, 1<<12+1) }},
		{"WithBatch(3) asks for more tokens at once than burst 2", func() {
			towerredis.NewBucket[string, string](okService, c, "n", 1, time.Second, 2, towerredis.WithBatch(3))
		}},
		{"option 0 is nil", func() { towerredis.NewBucket[string, string](okService, c, "n", 1, time.Second, 1, nil) }},
		{"towerredis.NewBucketLayer: name is empty", func() { towerredis.NewBucketLayer[string, string](c, "", 1, time.Second, 1) }},
		{"WithBatch: n must be at least 1, got 0", func() { towerredis.WithBatch(0) }},
		{"towerredis.WithMaxWait: d must not be negative, got -1ns", func() { towerredis.WithMaxWait(-1) }},
		{"NewKeyed: option 1 is nil", func() {
			towerredis.NewKeyed[string, string](okService, c, "n", key, 1, time.Second, 1, towerredis.WithMaxWait(0), nil)
		}},
		{"NewBucket: option 0 is nil", func() {
			towerredis.NewBucket[string, string](okService, c, "n", 1, time.Second, 1, towerredis.Option(nil))
		}},
		{"NewKeyed: key is nil", func() { towerredis.NewKeyed[string, string](okService, c, "n", nil, 1, time.Second, 1) }},
		{"NewKeyed: inner is nil", func() { towerredis.NewKeyed[string, string](nil, c, "n", key, 1, time.Second, 1) }},
		{"NewKeyed: burst must be at least 1", func() { towerredis.NewKeyed[string, string](okService, c, "n", key, 1, time.Second, 0) }},
		{"towerredis.NewKeyedLayer: client is nil", func() { towerredis.NewKeyedLayer[string, string](nil, "n", key, 1, time.Second, 1) }},
	} {
		t.Run(tt.want, func(t *testing.T) {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, tt.want) {
					t.Errorf("panicked with %v, want a message containing %q", r, tt.want)
				}
			}()
			tt.f()
		})
	}
}

// A token of the replica's batch costs no allocation: Ready and Call of a
// permit whose token comes from the batch allocate nothing.
func TestBucketBatchAllocs(t *testing.T) {
	srv := redistest.Start(t)
	r, _, rt := newTestBucket(t, srv.Addr(), "allocs", 1, time.Hour, 100, towerredis.WithBatch(100))
	p := mustReady(t, t.Context(), r) // the round trip for the batch
	p.Call(t.Context(), "x")
	ctx := t.Context()
	allocs := testing.AllocsPerRun(50, func() {
		p, err := r.Ready(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p.Call(ctx, "x")
	})
	if allocs != 0 {
		t.Errorf("%v allocations per request from the batch, want 0", allocs)
	}
	if n := rt.N.Load(); n != 1 {
		t.Errorf("%d round trips, want 1", n)
	}
}

// The batch's first token, taken by the caller that fetched it, released
// unused with no other token of the batch handed out: the whole batch
// goes back to Redis in one round trip, where another replica gets it.
// With a later token of the batch handed out, it is lost.
func TestBucketBatchFirstTokenBack(t *testing.T) {
	srv := redistest.Start(t)
	r, _, rt := newTestBucket(t, srv.Addr(), "first", 1, 10*time.Second, 3, towerredis.WithBatch(3))
	other, _, _ := newTestBucket(t, srv.Addr(), "first", 1, 10*time.Second, 3) // another replica, no batch
	p := mustReady(t, t.Context(), r)                                          // fetches the batch: all 3 tokens
	if _, ok, _ := tower.ReadyNow[string, string](other); ok {
		t.Fatal("the other replica got a token while the batch held them all")
	}
	p.Release()
	if n := rt.N.Load(); n != 2 {
		t.Errorf("%d round trips, want 2: the fetch and the batch given back", n)
	}
	for i := range 3 {
		if p, ok, err := tower.ReadyNow[string, string](other); !ok || err != nil {
			t.Fatalf("the other replica's token %d: ReadyNow = %v, %v; want the batch given back", i, ok, err)
		} else {
			p.Call(t.Context(), "x")
		}
	}

	r2, _, _ := newTestBucket(t, srv.Addr(), "first2", 1, 10*time.Second, 3, towerredis.WithBatch(3))
	other2, _, _ := newTestBucket(t, srv.Addr(), "first2", 1, 10*time.Second, 3)
	first := mustReady(t, t.Context(), r2)
	second := mustReady(t, t.Context(), r2) // token 1: handed out after token 0
	first.Release()                         // lost
	second.Release()                        // back to the batch
	if _, ok, _ := tower.ReadyNow[string, string](other2); ok {
		t.Error("the other replica got a token: token 0 went back although token 1 was handed out after it")
	}
	for i := range 2 {
		if p, ok, _ := tower.ReadyNow[string, string](r2); !ok {
			t.Fatalf("the batch's token %d: not ready, want tokens 1 and 2 still in the batch", i+1)
		} else {
			p.Call(t.Context(), "x")
		}
	}
}
