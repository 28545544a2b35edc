package towerotel_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerhttp"
	"github.com/towergo/tower/towerotel"
)

// waitFor bounds the waits of the tests that use the real clock.
const waitFor = 10 * time.Second

// newPrometheus returns a meter whose measurements a fresh registry
// gathers, through the OpenTelemetry Prometheus exporter, without the
// scope's labels and the target_info series, as a program serving
// /metrics would set it up.
func newPrometheus(t *testing.T) (*prometheus.Registry, *sdkmetric.MeterProvider) {
	t.Helper()
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		t.Fatal(err)
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	t.Cleanup(func() { provider.Shutdown(t.Context()) })
	return registry, provider
}

// A family is what a test checks of a gathered metric family: its type,
// unit and help (the exporter puts the unit in the name, as _seconds, and
// leaves the family's unit, OpenMetrics' # UNIT, empty), and one line per series, sorted, "{label="value",...}
// value", a histogram's value being "count=N", and the label names of
// each series in the order Prometheus has them.
type family struct {
	typ, unit, help string
	series          []string
}

// gather returns the families registry gathers whose name has prefix.
func gather(t *testing.T, registry *prometheus.Registry, prefix string) map[string]family {
	t.Helper()
	mfs, err := registry.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	got := map[string]family{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), prefix) {
			continue
		}
		f := family{typ: mf.GetType().String(), unit: mf.GetUnit(), help: mf.GetHelp()}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			var v string
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				v = fmt.Sprint(m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				v = fmt.Sprint(m.GetGauge().GetValue())
			case dto.MetricType_HISTOGRAM:
				v = fmt.Sprint("count=", m.GetHistogram().GetSampleCount())
			}
			f.series = append(f.series, "{"+strings.Join(labels, ",")+"} "+v)
		}
		sort.Strings(f.series)
		got[mf.GetName()] = f
	}
	return got
}

// check compares family name of got with want.
func check(t *testing.T, got map[string]family, name string, want family) {
	t.Helper()
	g, ok := got[name]
	if !ok {
		t.Errorf("%s: not gathered", name)
		return
	}
	if g.typ != want.typ || g.unit != want.unit || g.help != want.help {
		t.Errorf("%s: got type %s, unit %q, help %q; want %s, %q, %q", name, g.typ, g.unit, g.help, want.typ, want.unit, want.help)
	}
	if gs, ws := strings.Join(g.series, "\n"), strings.Join(want.series, "\n"); gs != ws {
		t.Errorf("%s: got series\n%s\nwant\n%s", name, gs, ws)
	}
}

// outcomes returns a series line for each outcome, sorted as gather
// sorts them: labels, with %q where the outcome's name goes, and the
// value, served of served, shed of shed, 0 of the others.
func outcomes(labels string, served, shed int) []string {
	var lines []string
	for o := metrics.Outcome(1); int(o) < metrics.NumOutcomes; o++ {
		n := map[metrics.Outcome]int{metrics.OutcomeServed: served, metrics.OutcomeShed: shed}[o]
		lines = append(lines, fmt.Sprintf("{"+labels+"} %d", o.String(), n))
	}
	sort.Strings(lines)
	return lines
}

// notifying is a RequestSink that passes each request on to its sink and
// then sends it on observed, so that a test knows when a request it
// answered was recorded.
type notifying struct {
	sink     metrics.RequestSink
	observed chan metrics.Request
}

func (n notifying) ObserveRequest(r metrics.Request) {
	n.sink.ObserveRequest(r)
	n.observed <- r
}

// An HTTP server, on a real loopback socket, whose stack is the metrics
// layer over LoadShed over ConcurrencyLimit(1), reporting to a Sink and,
// through its Handler, to a RequestSink, scraped as Prometheus would:
// the tower_* counters are there at zero before any request; then, with
// one request held in the handler and one shed, the served and the shed
// ones are apart in every family, with the semantic conventions' names,
// types, units and labels.
func TestPrometheusScrape(t *testing.T) {
	registry, provider := newPrometheus(t)
	meter := provider.Meter("github.com/towergo/tower")
	requests := mustRequestSink(t, meter, towerotel.WithProtocols(metrics.HTTPServer))
	calls := mustSink(t, meter, towerotel.WithAttributes(attribute.String("layer", "stack")))

	help := "Requests the HTTP and gRPC adapters observed, by protocol and outcome."
	callsHelp := "Calls the metrics layer observed, by outcome."
	t.Run("AtZero", func(t *testing.T) {
		got := gather(t, registry, "")
		check(t, got, "tower_requests_total", family{"COUNTER", "", help, outcomes(`tower_outcome=%q,tower_protocol="http-server"`, 0, 0)})
		check(t, got, "tower_calls_total", family{"COUNTER", "", callsHelp, outcomes(`layer="stack",tower_outcome=%q`, 0, 0)})
		check(t, got, "tower_inflight", family{"GAUGE", "", "Requests from the grant of their reservation to the end of their call.", []string{`{layer="stack"} 0`}})
		check(t, got, "tower_shed_total", family{"COUNTER", "", "Requests a LoadShed turned away.", []string{`{layer="stack"} 0`}})
		for _, name := range []string{"http_server_request_duration_seconds", "tower_latency_seconds"} {
			if f, ok := got[name]; ok {
				t.Errorf("%s: got %v before any request, want no family: a histogram has no series until it records", name, f.series)
			}
		}
		if len(got) != 15 {
			t.Errorf("got %d families, want 15: the 13 kinds', tower_calls_total and tower_requests_total", len(got))
		}
	})

	entered, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		io.WriteString(w, "item")
	})
	observed := make(chan metrics.Request, 2)
	protect := towerhttp.ServerStack().Metrics(calls).LoadShed().ConcurrencyLimit(1)
	srv := httptest.NewServer(towerhttp.NewHandler(mux, protect, towerhttp.WithRequestMetrics(notifying{requests, observed})))
	defer srv.Close()
	client := &http.Client{Timeout: waitFor}
	get := func(path string) (int, error) {
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	wait := func(what string, ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(waitFor):
			t.Fatalf("no %s after %v", what, waitFor)
		}
	}
	waitObserved := func(want metrics.Outcome) {
		t.Helper()
		select {
		case r := <-observed:
			if r.Outcome != want {
				t.Fatalf("observed %v, want %v", r.Outcome, want)
			}
		case <-time.After(waitFor):
			t.Fatalf("no %v request observed after %v", want, waitFor)
		}
	}

	held := make(chan int, 1)
	go func() {
		code, err := get("/items/1")
		if err != nil {
			t.Errorf("held request: %v", err)
		}
		held <- code
	}()
	wait("request in the handler", entered)
	if code, err := get("/items/2"); err != nil || code != http.StatusServiceUnavailable {
		t.Fatalf("second request: got %d, %v; want 503", code, err)
	}
	waitObserved(metrics.OutcomeShed)
	close(release)
	select {
	case code := <-held:
		if code != http.StatusOK {
			t.Fatalf("held request: got %d, want 200", code)
		}
	case <-time.After(waitFor):
		t.Fatalf("held request not answered after %v", waitFor)
	}
	waitObserved(metrics.OutcomeServed)

	got := gather(t, registry, "")
	check(t, got, "http_server_request_duration_seconds", family{"HISTOGRAM", "", "Duration of HTTP server requests.", []string{
		`{error_type="shed",http_request_method="GET",http_response_status_code="503",http_route="/items/{id}",tower_outcome="shed",url_scheme="http"} count=1`,
		`{http_request_method="GET",http_response_status_code="200",http_route="/items/{id}",tower_outcome="served",url_scheme="http"} count=1`,
	}})
	check(t, got, "tower_requests_total", family{"COUNTER", "", help, outcomes(`tower_outcome=%q,tower_protocol="http-server"`, 1, 1)})
	check(t, got, "tower_calls_total", family{"COUNTER", "", callsHelp, outcomes(`layer="stack",tower_outcome=%q`, 1, 1)})
	check(t, got, "tower_latency_seconds", family{"HISTOGRAM", "", "The latency of calls, from Call to its return, as the metrics layer measures it.", []string{
		`{layer="stack",tower_outcome="served"} count=1`,
		`{layer="stack",tower_outcome="shed"} count=1`,
	}})
	check(t, got, "tower_inflight", family{"GAUGE", "", "Requests from the grant of their reservation to the end of their call.", []string{`{layer="stack"} 0`}})
}

// The RPC durations, fed as the towergrpc interceptors report them, as
// Prometheus gathers them: rpc_server_call_duration_seconds and
// rpc_client_call_duration_seconds, with the served and the shed RPCs
// apart.
func TestPrometheusGRPC(t *testing.T) {
	registry, provider := newPrometheus(t)
	s := mustRequestSink(t, provider.Meter("github.com/towergo/tower"), towerotel.WithProtocols(metrics.GRPCServer, metrics.GRPCClient))
	for _, r := range []metrics.Request{
		{Protocol: metrics.GRPCServer, Method: "/pkg.Items/Get", Status: 0, Outcome: metrics.OutcomeServed, Latency: 3 * time.Millisecond},
		{Protocol: metrics.GRPCServer, Method: "/pkg.Items/Get", Status: 8, Outcome: metrics.OutcomeShed, Latency: 20 * time.Microsecond},
		{Protocol: metrics.GRPCClient, Method: "/pkg.Items/Get", Status: 8, Outcome: metrics.OutcomeShed, Latency: 40 * time.Microsecond},
	} {
		s.ObserveRequest(r)
	}
	got := gather(t, registry, "")
	check(t, got, "rpc_server_call_duration_seconds", family{"HISTOGRAM", "", "Measures the duration of an incoming Remote Procedure Call (RPC).", []string{
		`{error_type="shed",rpc_method="pkg.Items/Get",rpc_response_status_code="RESOURCE_EXHAUSTED",rpc_system_name="grpc",tower_outcome="shed"} count=1`,
		`{rpc_method="pkg.Items/Get",rpc_response_status_code="OK",rpc_system_name="grpc",tower_outcome="served"} count=1`,
	}})
	check(t, got, "rpc_client_call_duration_seconds", family{"HISTOGRAM", "", "Measures the duration of an outgoing Remote Procedure Call (RPC).", []string{
		`{error_type="RESOURCE_EXHAUSTED",rpc_method="pkg.Items/Get",rpc_response_status_code="RESOURCE_EXHAUSTED",rpc_system_name="grpc",tower_outcome="shed"} count=1`,
	}})
	requests := append(outcomes(`tower_outcome=%q,tower_protocol="grpc-client"`, 0, 1), outcomes(`tower_outcome=%q,tower_protocol="grpc-server"`, 1, 1)...)
	sort.Strings(requests)
	check(t, got, "tower_requests_total", family{"COUNTER", "", "Requests the HTTP and gRPC adapters observed, by protocol and outcome.", requests})
	if _, ok := got["http_server_request_duration_seconds"]; ok {
		t.Errorf("http_server_request_duration_seconds: gathered, want no family")
	}
}
