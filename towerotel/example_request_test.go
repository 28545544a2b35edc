package towerotel_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerhttp"
	"github.com/towergo/tower/towerotel"
)

// scrape prints the samples of registry, as a scrape of /metrics would
// get them, whose names have one of prefixes and whose value is not 0,
// and how many there are at 0. Histograms print their count only.
func scrape(registry *prometheus.Registry, prefixes ...string) {
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(registry, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	lines := bufio.NewScanner(rec.Body)
	zeros := 0
	for lines.Scan() {
		line := lines.Text()
		wanted := false
		for _, p := range prefixes {
			wanted = wanted || strings.HasPrefix(line, p)
		}
		switch {
		case !wanted, strings.Contains(line, "_bucket{"), strings.Contains(line, "_sum{"):
		case strings.HasSuffix(line, " 0"):
			zeros++
		default:
			fmt.Println(line)
		}
	}
	fmt.Println("series at 0:", zeros)
}

// An HTTP server's requests as OpenTelemetry's semantic conventions have
// them, served as Prometheus text: the Handler reports each request to a
// RequestSink, which records it in http.server.request.duration with its
// method, route, status and scheme, its error.type if it failed, and its
// outcome. One request is held in the handler while a second is shed:
// their series are apart. tower_requests_total counts the requests by
// outcome, at 0 from the start.
func ExampleNewRequestSink() {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		panic(err)
	}
	meter := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter)).Meter("github.com/towergo/tower")
	requests, err := towerotel.NewRequestSink(meter, towerotel.WithProtocols(metrics.HTTPServer))
	if err != nil {
		panic(err)
	}

	entered, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		io.WriteString(w, "item")
	})
	protect := towerhttp.ServerStack().LoadShed().ConcurrencyLimit(1)
	h := towerhttp.NewHandler(mux, protect, towerhttp.WithRequestMetrics(requests))

	serve := func(path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code
	}
	held := make(chan int)
	go func() { held <- serve("/items/1") }()
	<-entered                      // the limit's one permit is taken
	fmt.Println(serve("/items/2")) // shed
	close(release)
	fmt.Println(<-held)

	scrape(registry, "http_server_", "tower_")
	// Output:
	// 503
	// 200
	// http_server_request_duration_seconds_count{http_request_method="GET",http_response_status_code="200",http_route="/items/{id}",tower_outcome="served",url_scheme="http"} 1
	// http_server_request_duration_seconds_count{error_type="shed",http_request_method="GET",http_response_status_code="503",http_route="/items/{id}",tower_outcome="shed",url_scheme="http"} 1
	// tower_requests_total{tower_outcome="served",tower_protocol="http-server"} 1
	// tower_requests_total{tower_outcome="shed",tower_protocol="http-server"} 1
	// series at 0: 4
}

// The outcome attribute keeps the latencies of served calls apart from
// those of calls turned away: a p99 over both would fall as the service
// sheds more. A dashboard takes the served ones,
//
//	histogram_quantile(0.99, sum by (le) (rate(tower_latency_seconds_bucket{tower_outcome="served"}[5m])))
//
// and an alert the share shed, from the calls' counter, there at 0 from
// the start:
//
//	sum(rate(tower_calls_total{tower_outcome="shed"}[5m])) / sum(rate(tower_calls_total[5m])) > 0.01
func ExampleSink_Observe() {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		panic(err)
	}
	meter := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter)).Meter("github.com/towergo/tower")
	sink, err := towerotel.NewSink(meter, towerotel.WithAttributes(attribute.String("layer", "stack")))
	if err != nil {
		panic(err)
	}

	// What the metrics layer reports: two calls served in 250ms and 750ms,
	// three shed at once.
	sink.Observe(250*time.Millisecond, metrics.OutcomeServed)
	sink.Observe(750*time.Millisecond, metrics.OutcomeServed)
	for range 3 {
		sink.Observe(10*time.Microsecond, metrics.OutcomeShed)
	}

	scrape(registry, "tower_calls_", "tower_latency_")
	// Output:
	// tower_calls_total{layer="stack",tower_outcome="served"} 2
	// tower_calls_total{layer="stack",tower_outcome="shed"} 3
	// tower_latency_seconds_count{layer="stack",tower_outcome="served"} 2
	// tower_latency_seconds_count{layer="stack",tower_outcome="shed"} 3
	// series at 0: 4
}
