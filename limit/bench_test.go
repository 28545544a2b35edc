package limit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
)

// sink and psink keep the benchmarks' results alive.
var (
	sink  int
	psink atomic.Int64
)

// echoInt answers its request at once.
var echoInt = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// readyCall is one request: Ready, Call, and the response used.
func readyCall(b *testing.B, ctx context.Context, svc tower.Service[int, int], req int) int {
	p, err := svc.Ready(ctx)
	if err != nil {
		b.Fatal(err)
	}
	res, err := p.Call(ctx, req)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// BenchmarkConcurrency is the uncontended path: one caller, a limit it never
// reaches.
func BenchmarkConcurrency(b *testing.B) {
	svc := limit.NewConcurrency[int, int](echoInt, 1<<20)
	ctx := b.Context()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n += readyCall(b, ctx, svc, 1)
	}
	sink += n
}

// BenchmarkConcurrencyParallel shares one limit among GOMAXPROCS callers.
func BenchmarkConcurrencyParallel(b *testing.B) {
	svc := limit.NewConcurrency[int, int](echoInt, 1<<20)
	ctx := b.Context()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		n := 0
		for pb.Next() {
			p, err := svc.Ready(ctx)
			if err != nil {
				panic(err)
			}
			res, err := p.Call(ctx, 1)
			if err != nil {
				panic(err)
			}
			n += res
		}
		psink.Add(int64(n))
	})
}

// BenchmarkRate is the uncontended path of a rate it never reaches.
func BenchmarkRate(b *testing.B) {
	svc := limit.NewRate[int, int](echoInt, limit.MaxRate, time.Second)
	ctx := b.Context()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n += readyCall(b, ctx, svc, 1)
	}
	sink += n
}

// BenchmarkConcurrencyMetrics is BenchmarkConcurrency reporting to a
// metrics.Counts: two atomic adds per request.
func BenchmarkConcurrencyMetrics(b *testing.B) {
	svc := limit.NewConcurrency[int, int](echoInt, 1<<20, limit.WithMetrics(new(metrics.Counts)))
	ctx := b.Context()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n += readyCall(b, ctx, svc, 1)
	}
	sink += n
}

// BenchmarkConcurrencyMetricsParallel is BenchmarkConcurrencyParallel
// reporting to one metrics.Counts, whose counter every CPU updates.
func BenchmarkConcurrencyMetricsParallel(b *testing.B) {
	svc := limit.NewConcurrency[int, int](echoInt, 1<<20, limit.WithMetrics(new(metrics.Counts)))
	ctx := b.Context()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		n := 0
		for pb.Next() {
			p, err := svc.Ready(ctx)
			if err != nil {
				panic(err)
			}
			res, err := p.Call(ctx, 1)
			if err != nil {
				panic(err)
			}
			n += res
		}
		psink.Add(int64(n))
	})
}

// BenchmarkRateMetrics is BenchmarkRate with a sink, which a rate never
// reached does not touch.
func BenchmarkRateMetrics(b *testing.B) {
	svc := limit.NewRate[int, int](echoInt, limit.MaxRate, time.Second, limit.WithMetrics(new(metrics.Counts)))
	ctx := b.Context()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n += readyCall(b, ctx, svc, 1)
	}
	sink += n
}
