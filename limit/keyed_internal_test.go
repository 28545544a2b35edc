package limit

import (
	"context"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/towergo/tower"
)

// KeyedHolds reports whether k's table holds key, for the tests of package
// limit_test.
func KeyedHolds[Req, Res any, K comparable](k *Keyed[Req, Res, K], key K) bool {
	s := k.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.index[key]
	return ok
}

// KeyedShards returns the number of shards of k's table and each one's
// share of the cap.
func KeyedShards[Req, Res any, K comparable](k *Keyed[Req, Res, K]) []int {
	shares := make([]int, len(k.shards))
	for i := range k.shards {
		shares[i] = k.shards[i].max
	}
	return shares
}

// testShard is a shard of cap max holding keys 0, 1, ... with the given
// states, in that order, its cursor at 0.
func testShard(max int, tats ...time.Duration) *keyShard[int] {
	s := &keyShard[int]{index: map[int]int{}, max: max}
	for i, tat := range tats {
		s.index[i] = i
		s.entries = append(s.entries, keyEntry[int]{key: i, tat: tat})
	}
	return s
}

// keys returns the shard's keys in the order of its entries, and fails t
// unless the index agrees with them.
func (s *keyShard[K]) keys(t *testing.T) []K {
	t.Helper()
	if len(s.index) != len(s.entries) {
		t.Fatalf("index holds %d keys, entries %d", len(s.index), len(s.entries))
	}
	var keys []K
	for i, e := range s.entries {
		if s.index[e.key] != i {
			t.Fatalf("index says key %v is at %d, it is at %d", e.key, s.index[e.key], i)
		}
		keys = append(keys, e.key)
	}
	return keys
}

func equal[K comparable](a, b []K) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A sweep checks exactly two entries from the cursor and deletes those
// that are full at now (tat <= now, to the nanosecond), moving the last
// entry into a deleted one's place and checking it next.
func TestKeyShardSweep(t *testing.T) {
	g := newGCRA("test", 10, time.Second, 1)
	now := time.Second
	// Keys 0..4: full, full by 1ns (tat == now), owing 1ns, full, owing.
	s := testShard(10, now-time.Millisecond, now, now+1, 0, now+time.Second)
	s.sweep(g, now)
	// 0 is full: 4 moves to 0's place and is checked next, owing: kept.
	if got, want := s.keys(t), []int{4, 1, 2, 3}; !equal(got, want) || s.cursor != 1 {
		t.Fatalf("after one sweep: keys %v cursor %d, want %v and 1", got, s.cursor, want)
	}
	s.sweep(g, now)
	// 1 is full (tat == now): 3 moves in, and is full too.
	if got, want := s.keys(t), []int{4, 2}; !equal(got, want) || s.cursor != 1 {
		t.Fatalf("after two sweeps: keys %v cursor %d, want %v and 1", got, s.cursor, want)
	}
	s.sweep(g, now)
	// 2 owes 1ns: kept; the cursor wraps to 4, which owes: kept.
	if got, want := s.keys(t), []int{4, 2}; !equal(got, want) || s.cursor != 1 {
		t.Fatalf("after three sweeps: keys %v cursor %d, want %v and 1", got, s.cursor, want)
	}
	s.sweep(g, now+1) // 2 is full now
	if got, want := s.keys(t), []int{4}; !equal(got, want) {
		t.Fatalf("1ns later: keys %v, want %v", got, want)
	}
	s.sweep(g, math.MaxInt64)
	s.sweep(g, math.MaxInt64) // nothing left: nothing to do
	if n := len(s.keys(t)); n != 0 {
		t.Fatalf("at the end of time: %d keys left, want 0", n)
	}
	for i, e := range s.entries[:cap(s.entries)] {
		if e != (keyEntry[int]{}) {
			t.Errorf("spare room %d still holds %v: a deleted key is kept alive", i, e)
		}
	}
}

// At the cap, a new key deletes, among the 8 entries from the cursor, the
// one whose bucket is full soonest, the earliest of equals; the cursor
// moves past the 8, wrapping; entries beyond the 8 are not looked at.
func TestKeyShardEvict(t *testing.T) {
	tats := make([]time.Duration, 12)
	for i := range tats {
		tats[i] = time.Duration(100+i) * time.Second // all owing, 0 the least
	}
	tats[5] = 50 * time.Second // the nearest full among 0..7
	tats[9] = 1                // nearer, but beyond the 8 scanned
	s := testShard(12, tats...)
	s.insert(100, time.Hour)
	if _, ok := s.index[5]; ok {
		t.Fatalf("key 5, the nearest full among the 8 scanned, is still there; keys %v", s.keys(t))
	}
	if _, ok := s.index[9]; !ok {
		t.Fatal("key 9, beyond the 8 scanned, was deleted")
	}
	if s.cursor != 8 || len(s.keys(t)) != 12 || s.index[100] != 11 {
		t.Fatalf("cursor %d, %d keys, new key at %d; want 8, 12, 11", s.cursor, len(s.entries), s.index[100])
	}
	// From the cursor at 8, wrapping: 8, 9, 10, 11 (the new key, an hour),
	// 0, 1, 2, 3. Key 9, 1ns from full, goes.
	s.insert(101, time.Hour)
	if _, ok := s.index[9]; ok {
		t.Fatalf("key 9, the nearest full from the cursor, is still there; keys %v", s.keys(t))
	}
	if s.cursor != 4 {
		t.Fatalf("cursor %d, want 4 after wrapping", s.cursor)
	}

	// Equals: the first scanned goes; a full one goes before any owing.
	s = testShard(3, 7, 7, 7)
	s.cursor = 1
	s.insert(9, 1)
	if got, want := s.keys(t), []int{0, 2, 9}; !equal(got, want) {
		t.Fatalf("equals: keys %v, want %v (the first from the cursor, 1, goes)", got, want)
	}
	s = testShard(3, 5, -1, 5)
	s.insert(9, 1)
	if _, ok := s.index[1]; ok || len(s.entries) != 3 {
		t.Fatalf("the full key is still there: keys %v", s.keys(t))
	}
	// A cursor past the end, left by deletions, starts from 0.
	s = testShard(2, 3, 4)
	s.cursor = 5
	s.insert(9, 1)
	if got, want := s.keys(t), []int{1, 9}; !equal(got, want) || s.cursor != 0 {
		t.Fatalf("cursor past the end: keys %v cursor %d, want %v and 0", got, s.cursor, want)
	}
}

// A shard of cap 1 holds one key: each new key replaces it.
func TestKeyShardCapOne(t *testing.T) {
	g := newGCRA("test", 10, time.Second, 1)
	s := testShard(1)
	for k := range 5 {
		if _, wait, ok := s.take(g, k, 0, 0); !ok || wait != 0 {
			t.Fatalf("new key %d: wait %v ok %t, want 0 and true", k, wait, ok)
		}
		if got := s.keys(t); !equal(got, []int{k}) {
			t.Fatalf("after key %d: keys %v", k, got)
		}
	}
}

// A key not equal to itself is admitted and not kept: the index could
// never find it again, nor delete it.
func TestKeyShardNaN(t *testing.T) {
	g := newGCRA("test", 1, time.Hour, 1)
	s := &keyShard[float64]{index: map[float64]int{}, max: 4}
	for range 10 {
		if _, _, ok := s.take(g, math.NaN(), 0, 0); !ok {
			t.Fatal("a NaN key was refused")
		}
	}
	if len(s.index) != 0 || len(s.entries) != 0 {
		t.Fatalf("NaN keys kept: index %d, entries %d", len(s.index), len(s.entries))
	}
}

// The shards: a power of two, at most 64, more than the processors but
// each with a share of at least 256 of the cap; the shares add up to the
// cap.
func TestKeyedShardCount(t *testing.T) {
	procs := 1 // the least power of two at least 4 per processor
	for procs < 4*runtime.GOMAXPROCS(0) {
		procs *= 2
	}
	for _, c := range []struct{ max, want int }{
		{1, 1}, {511, 1}, {512, 2}, {1023, 2}, {1024, 4}, {1 << 30, 64},
	} {
		want := min(c.want, procs)
		if got := shardCount(c.max); got != want {
			t.Errorf("shardCount(%d) = %d, want %d", c.max, got, want)
		}
	}
	echo := tower.ServiceFunc[int, int](func(_ context.Context, i int) (int, error) { return i, nil })
	old := runtime.GOMAXPROCS(64) // 256 shards wanted: 64 at most
	if got := shardCount(1 << 30); got != 64 {
		t.Errorf("with 64 processors, shardCount(1<<30) = %d, want 64", got)
	}
	if got := shardCount(64 * 256); got != 64 {
		t.Errorf("with 64 processors, shardCount(64*256) = %d, want 64", got)
	}
	if got := shardCount(64*256 - 1); got != 32 {
		t.Errorf("with 64 processors, shardCount(64*256-1) = %d, want 32", got)
	}
	runtime.GOMAXPROCS(old)
	k := NewKeyed[int, int](echo, func(i int) int { return i }, 1, time.Second, 1, WithMaxKeys(10_001))
	sum := 0
	for i := range k.shards {
		share := k.shards[i].max
		sum += share
		if want := 10_001 / len(k.shards); share != want && share != want+1 {
			t.Errorf("shard %d has %d of the cap, want %d or %d", i, share, want, want+1)
		}
	}
	if sum != 10_001 {
		t.Errorf("shares add up to %d, want 10001", sum)
	}
}

// A key of an interface type that holds a value that cannot be hashed (a
// slice) panics as it is looked up: the panic goes on up to the caller,
// with the shard's lock released, and the next request is served. With one
// shard the key is first hashed under the lock; with several, before it.
func TestKeyedUnhashableKeyReleasesLock(t *testing.T) {
	echo := tower.ServiceFunc[any, any](func(_ context.Context, req any) (any, error) { return req, nil })
	for _, tt := range []struct {
		name string
		opts []KeyedOption
	}{
		{"OneShard", []KeyedOption{WithMaxKeys(1)}},
		{"Shards", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := NewKeyed[any, any](echo, func(req any) any { return req }, 10, time.Second, 1, tt.opts...)
			if one := len(k.shards) == 1; one != (tt.name == "OneShard") {
				t.Fatalf("%d shards", len(k.shards))
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Error("a call with an unhashable key did not panic")
					}
				}()
				tower.Call[any, any](t.Context(), k, []int{1})
			}()
			for i := range k.shards {
				if !k.shards[i].mu.TryLock() {
					t.Fatalf("shard %d is still locked after the panic", i)
				}
				k.shards[i].mu.Unlock()
			}
			if res, err := tower.Call[any, any](t.Context(), k, "a"); res != "a" || err != nil {
				t.Errorf("next call: got %v, %v; want a", res, err)
			}
		})
	}
}
