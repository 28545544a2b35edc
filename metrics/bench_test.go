package metrics_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
)

// sink and psink keep the benchmarks' results alive.
var (
	sink  int
	psink atomic.Int64
)

// echo answers its request at once.
var echo = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

func benchmarkCall(b *testing.B, svc tower.Service[int, int]) {
	ctx := b.Context()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		p, err := svc.Ready(ctx)
		if err != nil {
			b.Fatal(err)
		}
		res, err := p.Call(ctx, 1)
		if err != nil {
			b.Fatal(err)
		}
		n += res
	}
	sink += n
}

// BenchmarkBaseline is the ServiceFunc alone, for comparison.
func BenchmarkBaseline(b *testing.B) { benchmarkCall(b, echo) }

// BenchmarkLayer is the metrics layer reporting to a Counts: two clock
// readings, two adds and an observation per request.
func BenchmarkLayer(b *testing.B) { benchmarkCall(b, metrics.New(echo, &metrics.Counts{})) }

// BenchmarkLayerParallel shares the layer and its Counts among GOMAXPROCS
// callers.
func BenchmarkLayerParallel(b *testing.B) {
	svc := metrics.New(echo, &metrics.Counts{})
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

// BenchmarkCountsAdd is one Add through the Sink interface.
func BenchmarkCountsAdd(b *testing.B) {
	var s metrics.Sink = &metrics.Counts{}
	b.ReportAllocs()
	for b.Loop() {
		s.Add(metrics.InFlight, 1)
	}
}

// BenchmarkCountsObserve is one Observe through the Sink interface.
func BenchmarkCountsObserve(b *testing.B) {
	var s metrics.Sink = &metrics.Counts{}
	b.ReportAllocs()
	for b.Loop() {
		s.Observe(time.Millisecond)
	}
}
