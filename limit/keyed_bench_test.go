package limit_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towertest"
)

// manyKeys are 10,000 keys as a client address looks.
var manyKeys = func() []string {
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = "203.0." + strconv.Itoa(i/256) + "." + strconv.Itoa(i%256)
	}
	return keys
}()

// neverReached is a Keyed whose keys never run out of tokens: a token
// every nanosecond and a burst of a billion.
func neverReached(opts ...limit.KeyedOption) *keyed {
	return limit.NewKeyed[string, string](echo, ident, 1, 1, 1<<30, opts...)
}

// A request whose key is in the table allocates nothing, through one
// shard or many.
func TestKeyedNoAllocs(t *testing.T) {
	for _, tt := range []struct {
		name string
		k    *keyed
		keys []string
	}{
		{"OneShard", neverReached(limit.WithMaxKeys(511)), manyKeys[:500]},
		{"Shards", neverReached(), manyKeys},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if n := len(limit.KeyedShards(tt.k)); (n == 1) != (tt.name == "OneShard") {
				t.Fatalf("%d shards", n)
			}
			ctx := t.Context()
			for _, key := range tt.keys {
				if _, err := tower.Call(ctx, tt.k, key); err != nil {
					t.Fatal(err)
				}
			}
			i := 0
			allocs := testing.AllocsPerRun(1000, func() {
				i = (i + 7919) % len(tt.keys)
				if _, err := tower.Call(ctx, tt.k, tt.keys[i]); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("got %v allocations per request, want 0", allocs)
			}
		})
	}
}

// BenchmarkKeyedOneKey is the path of a key in the table, always the same
// one, never refused.
func BenchmarkKeyedOneKey(b *testing.B) {
	towertest.Bench(b, neverReached(), "203.0.113.42")
}

// BenchmarkKeyedManyKeys goes round 10,000 keys in the table.
func BenchmarkKeyedManyKeys(b *testing.B) {
	k := neverReached()
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i = (i + 7919) % len(manyKeys)
		if _, err := tower.Call(ctx, k, manyKeys[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeyedNewKeys is a flood of keys never seen, at the cap: each
// request inserts a key and deletes one.
func BenchmarkKeyedNewKeys(b *testing.B) {
	k := neverReached(limit.WithMaxKeys(10_000))
	ctx := context.Background()
	keys := make([]string, 1<<20)
	for i := range keys {
		keys[i] = "client-" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := tower.Call(ctx, k, keys[i%len(keys)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkKeyedRefused is a key over its limit: each request is refused,
// and allocates its *KeyLimitError.
func BenchmarkKeyedRefused(b *testing.B) {
	k := limit.NewKeyed[string, string](echo, ident, 1, time.Hour, 1)
	ctx := context.Background()
	tower.Call(ctx, k, "a")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tower.Call(ctx, k, "a"); !errors.Is(err, limit.ErrKeyLimited) {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeyedParallelOneKey shares one key among GOMAXPROCS callers:
// they meet on its shard's lock.
func BenchmarkKeyedParallelOneKey(b *testing.B) {
	towertest.BenchParallel(b, neverReached(), "203.0.113.42")
}

// BenchmarkKeyedParallelManyKeys has GOMAXPROCS callers going round 10,000
// keys, spread over the shards.
func BenchmarkKeyedParallelManyKeys(b *testing.B) {
	benchParallelKeys(b, neverReached(), manyKeys)
}

// BenchmarkKeyedParallelOneShard has GOMAXPROCS callers going round 500
// keys in a table of one shard (a cap of 511), to show what sharding buys.
func BenchmarkKeyedParallelOneShard(b *testing.B) {
	benchParallelKeys(b, neverReached(limit.WithMaxKeys(511)), manyKeys[:500])
}

// BenchmarkKeyedParallelShards is BenchmarkKeyedParallelOneShard with the
// default cap, and its shards.
func BenchmarkKeyedParallelShards(b *testing.B) {
	benchParallelKeys(b, neverReached(), manyKeys[:500])
}

func benchParallelKeys(b *testing.B, k *keyed, keys []string) {
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		i := int(next.Add(1)) * 1009
		for pb.Next() {
			i = (i + 7919) % len(keys)
			if _, err := tower.Call(ctx, k, keys[i]); err != nil {
				panic(err)
			}
		}
	})
}
