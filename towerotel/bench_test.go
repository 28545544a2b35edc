package towerotel_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

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

// BenchmarkObserve is one call counted and its latency recorded in the
// histogram, under the attribute set of its outcome, made with the Sink.
func BenchmarkObserve(b *testing.B) {
	for _, out := range []metrics.Outcome{metrics.OutcomeServed, metrics.OutcomeShed} {
		b.Run(out.String(), func(b *testing.B) {
			meter, _ := newReader()
			s := mustSink(b, meter, towerotel.WithAttributes(attribute.String("layer", "stack")))
			b.ReportAllocs()
			for b.Loop() {
				s.Observe(3*time.Millisecond, out)
			}
		})
	}
}

// benchRequests are the requests the ObserveRequest benchmarks cycle
// through: four attribute sets of an HTTP server, or of a gRPC server.
var benchRequests = map[string][]metrics.Request{
	"HTTPServer": {
		{Protocol: metrics.HTTPServer, Method: "GET", Route: "/items/{id}", Scheme: "http", Status: 200, Outcome: metrics.OutcomeServed, Latency: 3 * time.Millisecond},
		{Protocol: metrics.HTTPServer, Method: "POST", Route: "/items", Scheme: "http", Status: 201, Outcome: metrics.OutcomeServed, Latency: 5 * time.Millisecond},
		{Protocol: metrics.HTTPServer, Method: "GET", Route: "/items/{id}", Scheme: "http", Status: 503, Outcome: metrics.OutcomeShed, Latency: 20 * time.Microsecond},
		{Protocol: metrics.HTTPServer, Method: "GET", Route: "/", Scheme: "https", Status: 404, Outcome: metrics.OutcomeServed, Latency: time.Millisecond},
	},
	"GRPCServer": {
		{Protocol: metrics.GRPCServer, Method: "/pkg.Items/Get", Outcome: metrics.OutcomeServed, Latency: 3 * time.Millisecond},
		{Protocol: metrics.GRPCServer, Method: "/pkg.Items/Put", Outcome: metrics.OutcomeServed, Latency: 5 * time.Millisecond},
		{Protocol: metrics.GRPCServer, Method: "/pkg.Items/Get", Status: 8, Outcome: metrics.OutcomeShed, Latency: 20 * time.Microsecond},
		{Protocol: metrics.GRPCServer, Method: "/pkg.Items/Get", Status: 5, Outcome: metrics.OutcomeError, Latency: time.Millisecond},
	},
}

// BenchmarkObserveRequest is one request of an attribute set seen before
// counted and recorded in its protocol's duration histogram: a lookup of
// the set kept, and the SDK's Record.
func BenchmarkObserveRequest(b *testing.B) {
	for _, name := range []string{"HTTPServer", "GRPCServer"} {
		b.Run(name, func(b *testing.B) {
			s := mustRequestSink(b, meterOnly())
			reqs := benchRequests[name]
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				s.ObserveRequest(reqs[i%len(reqs)])
				i++
			}
		})
	}
}

// BenchmarkObserveRequestParallel is BenchmarkObserveRequest's HTTP
// requests observed by GOMAXPROCS goroutines at once.
func BenchmarkObserveRequestParallel(b *testing.B) {
	s := mustRequestSink(b, meterOnly())
	reqs := benchRequests["HTTPServer"]
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			s.ObserveRequest(reqs[i%len(reqs)])
			i++
		}
	})
}

// BenchmarkObserveRequestNewSet is a request of an attribute set never
// seen, in a RequestSink that keeps no more sets: the set is made for the
// request, the cost of every request of a new set before it is kept.
func BenchmarkObserveRequestNewSet(b *testing.B) {
	s := mustRequestSink(b, meterOnly())
	for i := range 2000 {
		s.ObserveRequest(metrics.Request{Protocol: metrics.HTTPServer, Method: "GET", Route: fmt.Sprint("/r", i), Scheme: "http", Status: 200, Outcome: metrics.OutcomeServed})
	}
	r := metrics.Request{Protocol: metrics.HTTPServer, Method: "GET", Route: "/new", Scheme: "http", Status: 200, Outcome: metrics.OutcomeServed, Latency: time.Millisecond}
	b.ReportAllocs()
	for b.Loop() {
		s.ObserveRequest(r)
	}
}

// meterOnly returns a meter whose measurements a reader collects.
func meterOnly() metric.Meter {
	meter, _ := newReader()
	return meter
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
