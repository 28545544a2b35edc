package limit_test

import (
	"testing"
	"time"

	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// unreached is a Bucket of a token per nanosecond with room for 2^40: a
// limit the benchmarks never reach, so that they time the lock-free path.
func unreached(opts ...limit.Option) *limit.Bucket[int, int] {
	return limit.NewBucket(echoInt, 1, time.Nanosecond, 1<<40, opts...)
}

// BenchmarkBucket is the uncontended path of a token bucket it never
// empties: one compare-and-swap per request, and a pooled permit record.
func BenchmarkBucket(b *testing.B) {
	towertest.Bench(b, unreached(), 1)
}

// BenchmarkBucketParallel shares one bucket among GOMAXPROCS callers, who
// all compare-and-swap its one word.
func BenchmarkBucketParallel(b *testing.B) {
	towertest.BenchParallel(b, unreached(), 1)
}

// BenchmarkBucketMetrics is BenchmarkBucket with a sink, which a bucket
// never emptied does not touch.
func BenchmarkBucketMetrics(b *testing.B) {
	towertest.Bench(b, unreached(limit.WithMetrics(new(metrics.Counts))), 1)
}
