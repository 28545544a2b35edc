package towerotel

import (
	"fmt"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/towergo/tower/metrics"
)

// A RequestSink keeps at most maxSets attribute sets per protocol; a
// request of a set beyond them is recorded all the same, with a set made
// for it.
func TestSetCacheBounded(t *testing.T) {
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	s, err := NewRequestSink(provider.Meter("test"))
	if err != nil {
		t.Fatal(err)
	}
	request := func(i int) metrics.Request {
		return metrics.Request{Protocol: metrics.HTTPServer, Method: "GET", Route: fmt.Sprint("/r", i), Scheme: "http", Status: 200, Outcome: metrics.OutcomeServed}
	}
	for i := range maxSets + 10 {
		s.ObserveRequest(request(i))
	}
	if n := s.sets[metrics.HTTPServer].n.Load(); n != maxSets {
		t.Errorf("got %d sets kept, want %d", n, maxSets)
	}
	if n := s.sets[metrics.GRPCServer].n.Load(); n != 0 {
		t.Errorf("gRPC server: got %d sets kept, want 0", n)
	}
	kept, beyond := request(0), request(maxSets+1)
	if allocs := testing.AllocsPerRun(10, func() { s.ObserveRequest(kept) }); allocs != 0 {
		t.Errorf("kept set: got %v allocations, want 0", allocs)
	}
	if allocs := testing.AllocsPerRun(10, func() { s.ObserveRequest(beyond) }); allocs == 0 {
		t.Errorf("set beyond the bound: got no allocations, want its set made")
	}
	if n := s.sets[metrics.HTTPServer].n.Load(); n != maxSets {
		t.Errorf("after: got %d sets kept, want %d", n, maxSets)
	}
}
