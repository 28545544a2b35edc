package towerotel_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerotel"
)

// A stack whose layers report to OpenTelemetry, served as Prometheus text:
// the OpenTelemetry Prometheus exporter is the MeterProvider's reader, and
// promhttp serves the registry it fills. Each layer has a Sink of its own,
// told apart by a "layer" attribute, which becomes a label.
func Example() {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		panic(err)
	}
	meter := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter)).Meter("github.com/towergo/tower")
	sink := func(layer string) *towerotel.Sink {
		s, err := towerotel.NewSink(meter, towerotel.WithAttributes(attribute.String("layer", layer)))
		if err != nil {
			panic(err)
		}
		return s
	}

	echo := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		return req, nil
	})
	svc := tower.NewBuilder[string, string]().
		Layer(metrics.NewLayer[string, string](sink("stack"))). // the first layer is the outermost
		Layer(loadshed.NewLayer[string, string](loadshed.WithMetrics(sink("loadshed")))).
		Layer(limit.NewConcurrencyLayer[string, string](2, limit.WithMetrics(sink("limit")))).
		Service(echo)

	ctx := context.Background()
	held1, _ := svc.Ready(ctx) // two permits held: the limit is full
	held2, _ := svc.Ready(ctx)
	tower.Call(ctx, svc, "shed") // shed
	held1.Call(ctx, "a")
	tower.Call(ctx, svc, "b")

	// The Prometheus text exposition, as a scrape of /metrics would get it.
	// held2 is still in flight. Latency sums and buckets depend on the
	// machine, so only the counts are printed, with the type of each metric:
	// an up-down counter is a gauge. An instrument nothing was recorded to
	// (tower_waiting: nobody waited) has no sample.
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(registry, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	lines := bufio.NewScanner(rec.Body)
	for lines.Scan() {
		line := lines.Text()
		if strings.HasPrefix(line, "# TYPE tower_") ||
			strings.HasPrefix(line, "tower_") && !strings.Contains(line, "_bucket") && !strings.Contains(line, "_sum") {
			fmt.Println(line)
		}
	}
	held2.Release()
	// Output:
	// # TYPE tower_inflight gauge
	// tower_inflight{layer="limit"} 1
	// tower_inflight{layer="stack"} 1
	// # TYPE tower_latency_seconds histogram
	// tower_latency_seconds_count{layer="stack"} 3
	// # TYPE tower_shed_total counter
	// tower_shed_total{layer="loadshed"} 1
}
