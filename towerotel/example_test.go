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
	"github.com/towergo/tower/stack"
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
	svc := stack.New[string, string]().
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
	// an up-down counter is a gauge. Every counter of every Sink is there
	// from the start, at 0 until something is counted (tower_waiting: nobody
	// waited); those at 0 are counted, not printed.
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(registry, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	lines := bufio.NewScanner(rec.Body)
	typ, zeros := "", 0
	for lines.Scan() {
		switch line := lines.Text(); {
		case strings.HasPrefix(line, "# TYPE tower_"):
			typ = line
		case !strings.HasPrefix(line, "tower_") || strings.Contains(line, "_bucket") || strings.Contains(line, "_sum"):
		case strings.HasSuffix(line, " 0"):
			zeros++
		default:
			if typ != "" {
				fmt.Println(typ)
				typ = ""
			}
			fmt.Println(line)
		}
	}
	fmt.Println("series at 0:", zeros)
	held2.Release()
	// Output:
	// # TYPE tower_calls_total counter
	// tower_calls_total{layer="stack",tower_outcome="served"} 2
	// tower_calls_total{layer="stack",tower_outcome="shed"} 1
	// # TYPE tower_inflight gauge
	// tower_inflight{layer="limit"} 1
	// tower_inflight{layer="stack"} 1
	// # TYPE tower_latency_seconds histogram
	// tower_latency_seconds_count{layer="stack",tower_outcome="served"} 2
	// tower_latency_seconds_count{layer="stack",tower_outcome="shed"} 1
	// # TYPE tower_shed_total counter
	// tower_shed_total{layer="loadshed"} 1
	// series at 0: 52
}
