package limit_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
)

// heapInuse returns the heap bytes in use after a collection.
func heapInuse() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// floodKeys sends n requests of distinct keys through a Keyed of cap
// maxKeys, and returns the heap bytes in use afterwards, with the Keyed
// alive, over those before it was built, and the keys it holds. Under
// synctest, pause makes the clock advance a millisecond every 1000 keys (a
// flood of a million keys per second).
func floodKeys(t testing.TB, n, maxKeys int, pause bool) (heap int64, held int) {
	before := heapInuse()
	k := limit.NewKeyed[string, string](echo, ident, 10, time.Second, 2, limit.WithMaxKeys(maxKeys))
	ctx := context.Background()
	buf := make([]byte, 0, 16)
	for i := range n {
		key := string(strconv.AppendInt(append(buf[:0], "client-"...), int64(i), 10))
		if _, err := tower.Call(ctx, k, key); err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		if pause && i%1000 == 999 {
			time.Sleep(time.Millisecond)
		}
	}
	heap = heapInuse() - before
	held = k.Len()
	runtime.KeepAlive(k)
	return heap, held
}

// TestKeyedMillionKeysMemory feeds a million distinct keys to a Keyed with
// a cap of 10,000: every new key is served (each with its full burst),
// the table holds exactly its cap, and the heap stays under 200 bytes per
// key of the cap. BenchmarkKeyedFloodDefaultCap measures the default cap
// the same way; the figures are in DefaultMaxKeys's doc comment.
func TestKeyedMillionKeysMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a million requests")
	}
	const n, maxKeys = 1_000_000, 10_000
	synctest.Test(t, func(t *testing.T) {
		heap, held := floodKeys(t, n, maxKeys, true)
		t.Logf("%d distinct keys, cap %d: %d keys held, %d heap bytes in use (%.0f per key held)",
			n, maxKeys, held, heap, float64(heap)/float64(held))
		if held != maxKeys {
			t.Errorf("%d keys held, want exactly the cap, %d", held, maxKeys)
		}
		// An entry (24 bytes), its index slot (24 bytes at up to 7/8
		// load) and its key string (16 bytes) come to about 70 bytes;
		// the slice's and the map's spare room after doubling make it
		// about 130. 200 allows for the rest, and fails if entries of
		// deleted keys were kept.
		if bound := int64(maxKeys) * 200; heap > bound {
			t.Errorf("%d heap bytes in use, want at most %d", heap, bound)
		}
	})
}

// BenchmarkKeyedFloodDefaultCap is TestKeyedMillionKeysMemory with the
// default cap: it reports the heap bytes per key held after a million
// distinct keys (heap-B/key; its ns/op is mostly the collections that
// measure it).
func BenchmarkKeyedFloodDefaultCap(b *testing.B) {
	var heap int64
	var held int
	for b.Loop() {
		heap, held = floodKeys(b, 1_000_000, limit.DefaultMaxKeys, false)
	}
	b.ReportMetric(float64(heap)/float64(held), "heap-B/key")
}
