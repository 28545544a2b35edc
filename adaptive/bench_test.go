package adaptive_test

import (
	"context"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// echoInt answers its request at once.
var echoInt = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// unreached is a limiter whose limit the benchmarks never reach.
func unreached(opts ...adaptive.Option) *adaptive.Limiter[int, int] {
	opts = append([]adaptive.Option{adaptive.WithBounds(1<<20, 1<<20)}, opts...)
	return adaptive.New[int, int](echoInt, adaptive.Gradient2(), opts...)
}

// BenchmarkAdaptive is the uncontended path: one caller, a limit it never
// reaches. Compare with BenchmarkConcurrency, run beside it.
func BenchmarkAdaptive(b *testing.B) { towertest.Bench(b, unreached(), 1) }

// BenchmarkAdaptiveCritical is BenchmarkAdaptive with a priority in ctx.
func BenchmarkAdaptiveCritical(b *testing.B) {
	svc := unreached()
	ctx := tower.WithPriority(context.Background(), tower.PriorityCritical)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tower.Call(ctx, svc, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdaptiveMetrics is BenchmarkAdaptive reporting to a
// metrics.Counts.
func BenchmarkAdaptiveMetrics(b *testing.B) {
	towertest.Bench(b, unreached(adaptive.WithMetrics(new(metrics.Counts))), 1)
}

// BenchmarkAdaptiveParallel shares one limiter among GOMAXPROCS callers.
func BenchmarkAdaptiveParallel(b *testing.B) { towertest.BenchParallel(b, unreached(), 1) }

// BenchmarkConcurrency is limit's BenchmarkConcurrency, here so that one
// run compares the two.
func BenchmarkConcurrency(b *testing.B) {
	towertest.Bench(b, limit.NewConcurrency[int, int](echoInt, 1<<20), 1)
}

// BenchmarkConcurrencyParallel is limit's BenchmarkConcurrencyParallel.
func BenchmarkConcurrencyParallel(b *testing.B) {
	towertest.BenchParallel(b, limit.NewConcurrency[int, int](echoInt, 1<<20), 1)
}
