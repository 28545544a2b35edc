package towerotel_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerotel"
	"github.com/towergo/tower/towertest"
)

// sink and psink keep the benchmarks' results alive.
var (
	sink  int
	psink atomic.Int64
)

// echo answers its request at once.
var echo = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// BenchmarkAdd is one Add to an up-down counter, with one attribute,
// through the SDK.
func BenchmarkAdd(b *testing.B) {
	meter, _ := newReader()
	s := mustSink(b, meter, towerotel.WithAttributes(attribute.String("layer", "limit")))
	b.ReportAllocs()
	for b.Loop() {
		s.Add(metrics.InFlight, 1)
	}
}

// BenchmarkObserve is one latency recorded in the histogram.
func BenchmarkObserve(b *testing.B) {
	meter, _ := newReader()
	s := mustSink(b, meter, towerotel.WithAttributes(attribute.String("layer", "stack")))
	b.ReportAllocs()
	for b.Loop() {
		s.Observe(3 * time.Millisecond)
	}
}

func benchmarkCall(b *testing.B, svc tower.Service[int, int]) {
	ctx := b.Context()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		res, err := tower.Call(ctx, svc, 1)
		if err != nil {
			b.Fatal(err)
		}
		n += res
	}
	sink += n
}

// BenchmarkConcurrency is a ConcurrencyLimit without metrics, for
// comparison.
func BenchmarkConcurrency(b *testing.B) {
	benchmarkCall(b, limit.NewConcurrency(echo, 1<<20))
}

// BenchmarkConcurrencyOTel is a ConcurrencyLimit reporting InFlight to a
// Sink: two Adds per request.
func BenchmarkConcurrencyOTel(b *testing.B) {
	meter, _ := newReader()
	s := mustSink(b, meter, towerotel.WithAttributes(attribute.String("layer", "limit")))
	benchmarkCall(b, limit.NewConcurrency(echo, 1<<20, limit.WithMetrics(s)))
}

// BenchmarkConcurrencyOTelParallel shares the limit and its Sink among
// GOMAXPROCS callers: with the counts spread over cache lines, 2 CPUs serve
// a request in about half the time 1 does.
func BenchmarkConcurrencyOTelParallel(b *testing.B) {
	meter, _ := newReader()
	s := mustSink(b, meter, towerotel.WithAttributes(attribute.String("layer", "limit")))
	towertest.BenchParallel(b, limit.NewConcurrency(echo, 1<<20, limit.WithMetrics(s)), 1)
}

// BenchmarkLayerOTel is the metrics layer reporting to a Sink: two Adds,
// two clock readings and a histogram record per request.
func BenchmarkLayerOTel(b *testing.B) {
	meter, _ := newReader()
	s := mustSink(b, meter, towerotel.WithAttributes(attribute.String("layer", "stack")))
	benchmarkCall(b, metrics.New(echo, s))
}

// BenchmarkLayerOTelParallel shares the layer and its Sink among
// GOMAXPROCS callers.
func BenchmarkLayerOTelParallel(b *testing.B) {
	meter, _ := newReader()
	s := mustSink(b, meter, towerotel.WithAttributes(attribute.String("layer", "stack")))
	svc := metrics.New(echo, s)
	ctx := b.Context()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		n := 0
		for pb.Next() {
			res, err := tower.Call(ctx, svc, 1)
			if err != nil {
				panic(err)
			}
			n += res
		}
		psink.Add(int64(n))
	})
}
