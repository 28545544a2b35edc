package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// echo answers its request at once.
var echo = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// BenchmarkBaseline is the ServiceFunc alone, for comparison.
func BenchmarkBaseline(b *testing.B) { towertest.Bench(b, echo, 1) }

// BenchmarkLayer is the metrics layer reporting to a Counts: two clock
// readings, two adds and an observation per request.
func BenchmarkLayer(b *testing.B) { towertest.Bench(b, metrics.New(echo, &metrics.Counts{}), 1) }

// BenchmarkLayerParallel shares the layer and its Counts among GOMAXPROCS
// callers.
func BenchmarkLayerParallel(b *testing.B) {
	towertest.BenchParallel(b, metrics.New(echo, &metrics.Counts{}), 1)
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
		s.Observe(time.Millisecond, metrics.OutcomeServed)
	}
}
