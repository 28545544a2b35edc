package limit_test

import (
	"context"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// echoInt answers its request at once.
var echoInt = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// BenchmarkConcurrency is the uncontended path: one caller, a limit it never
// reaches.
func BenchmarkConcurrency(b *testing.B) {
	towertest.Bench(b, limit.NewConcurrency[int, int](echoInt, 1<<20), 1)
}

// BenchmarkConcurrencyParallel shares one limit among GOMAXPROCS callers.
func BenchmarkConcurrencyParallel(b *testing.B) {
	towertest.BenchParallel(b, limit.NewConcurrency[int, int](echoInt, 1<<20), 1)
}

// BenchmarkRate is the uncontended path of a rate it never reaches.
func BenchmarkRate(b *testing.B) {
	towertest.Bench(b, limit.NewRate[int, int](echoInt, limit.MaxRate, time.Second), 1)
}

// BenchmarkRateParallel is BenchmarkRate from every CPU at once: what the
// lock-free place count is for.
func BenchmarkRateParallel(b *testing.B) {
	towertest.BenchParallel(b, limit.NewRate[int, int](echoInt, limit.MaxRate, time.Second), 1)
}

// BenchmarkConcurrencyMetrics is BenchmarkConcurrency reporting to a
// metrics.Counts: two atomic adds per request.
func BenchmarkConcurrencyMetrics(b *testing.B) {
	towertest.Bench(b, limit.NewConcurrency[int, int](echoInt, 1<<20, limit.WithMetrics(new(metrics.Counts))), 1)
}

// BenchmarkConcurrencyMetricsParallel is BenchmarkConcurrencyParallel
// reporting to one metrics.Counts, whose counter every CPU updates.
func BenchmarkConcurrencyMetricsParallel(b *testing.B) {
	towertest.BenchParallel(b, limit.NewConcurrency[int, int](echoInt, 1<<20, limit.WithMetrics(new(metrics.Counts))), 1)
}

// BenchmarkRateMetrics is BenchmarkRate with a sink, which a rate never
// reached does not touch.
func BenchmarkRateMetrics(b *testing.B) {
	towertest.Bench(b, limit.NewRate[int, int](echoInt, limit.MaxRate, time.Second, limit.WithMetrics(new(metrics.Counts))), 1)
}
