package towerredis_test

import (
	"github.com/towergo/tower/towerredis"
	"testing"
	"time"

	"github.com/towergo/tower/towerredis/redistest"
	"github.com/towergo/tower/towertest"
)

// benchBucket runs requests through a Bucket of 1,000,000 a second with a
// burst as large, on a real redis-server, so that the limit never makes a
// caller wait and what is measured is the round trip and the limit's
// overhead; it reports the round trips per request.
func benchBucket(b *testing.B, parallel bool, opts ...towerredis.BucketOption) {
	srv := redistest.Start(b)
	rt := &trips{}
	opts = append(opts, towerredis.WithObserver(rt.Observe), towerredis.WithTimeout(time.Second))
	r := towerredis.NewBucket(okService, newClient(b, srv.Addr()), "bench", 1_000_000, time.Second, 1_000_000, opts...)
	if parallel {
		towertest.BenchParallel(b, r, "x")
	} else {
		towertest.Bench(b, r, "x")
	}
	b.ReportMetric(float64(rt.N.Load())/float64(b.N), "trips/op")
}

// BenchmarkBucket: one round trip per request.
func BenchmarkBucket(b *testing.B) { benchBucket(b, false) }

// BenchmarkBucketParallel: one round trip per request, from GOMAXPROCS
// goroutines.
func BenchmarkBucketParallel(b *testing.B) { benchBucket(b, true) }

// BenchmarkBucketBatch10: one round trip per 10 requests.
func BenchmarkBucketBatch10(b *testing.B) { benchBucket(b, false, towerredis.WithBatch(10)) }

// BenchmarkBucketBatch100Parallel: one round trip per 100 requests, from
// GOMAXPROCS goroutines.
func BenchmarkBucketBatch100Parallel(b *testing.B) { benchBucket(b, true, towerredis.WithBatch(100)) }

// BenchmarkKeyed: one round trip per request, 100 keys.
func BenchmarkKeyed(b *testing.B) {
	srv := redistest.Start(b)
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = "key" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	i := 0
	r := towerredis.NewKeyed(okService, newClient(b, srv.Addr()), "bench", func(string) string { i++; return keys[i%len(keys)] }, 1_000_000, time.Second, 1_000_000)
	towertest.Bench(b, r, "x")
}
