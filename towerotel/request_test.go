package towerotel_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/semconv/v1.43.0/httpconv"
	"go.opentelemetry.io/otel/semconv/v1.43.0/rpcconv"

	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towerotel"
	"github.com/towergo/tower/towertest"
)

func mustRequestSink(t testing.TB, meter metric.Meter, opts ...towerotel.Option) *towerotel.RequestSink {
	t.Helper()
	s, err := towerotel.NewRequestSink(meter, opts...)
	if err != nil {
		t.Fatalf("NewRequestSink: got error %v, want none", err)
	}
	return s
}

// histograms returns the histogram data points reader exports, one line
// per point, sorted, as collect does, without the bucket counts.
func histograms(t *testing.T, reader *sdkmetric.ManualReader) string {
	t.Helper()
	var lines []string
	for l := range strings.Lines(collect(t, reader)) {
		if i := strings.Index(l, " buckets="); i >= 0 {
			lines = append(lines, l[:i])
		}
	}
	return strings.Join(lines, "\n")
}

// Each HTTP request is recorded with the attributes of
// http.server.request.duration: a method the sink does not know is
// _OTHER; a route and a status only when there is one; error.type is the
// outcome of a request not served, the status of a served 5xx.
func TestRequestSinkHTTP(t *testing.T) {
	tests := []struct {
		name string
		r    metrics.Request
		want string
	}{
		{"served", metrics.Request{Method: "GET", Route: "/items/{id}", Scheme: "http", Status: 200, Outcome: metrics.OutcomeServed},
			"{http.request.method=GET,http.response.status_code=200,http.route=/items/{id},tower.outcome=served,url.scheme=http}"},
		{"served 404, no route", metrics.Request{Method: "GET", Scheme: "https", Status: 404, Outcome: metrics.OutcomeServed},
			"{http.request.method=GET,http.response.status_code=404,tower.outcome=served,url.scheme=https}"},
		{"served 499", metrics.Request{Method: "POST", Route: "/fail", Scheme: "http", Status: 499, Outcome: metrics.OutcomeServed},
			"{http.request.method=POST,http.response.status_code=499,http.route=/fail,tower.outcome=served,url.scheme=http}"},
		{"served 500", metrics.Request{Method: "POST", Route: "/fail", Scheme: "http", Status: 500, Outcome: metrics.OutcomeServed},
			"{error.type=500,http.request.method=POST,http.response.status_code=500,http.route=/fail,tower.outcome=served,url.scheme=http}"},
		{"shed", metrics.Request{Method: "GET", Route: "/items/{id}", Scheme: "http", Status: 503, Outcome: metrics.OutcomeShed},
			"{error.type=shed,http.request.method=GET,http.response.status_code=503,http.route=/items/{id},tower.outcome=shed,url.scheme=http}"},
		{"timed out", metrics.Request{Method: "GET", Route: "/slow", Scheme: "http", Status: 503, Outcome: metrics.OutcomeTimedOut},
			"{error.type=timed_out,http.request.method=GET,http.response.status_code=503,http.route=/slow,tower.outcome=timed_out,url.scheme=http}"},
		{"canceled, nothing sent", metrics.Request{Method: "PUT", Route: "/items/{id}", Scheme: "http", Outcome: metrics.OutcomeCanceled},
			"{error.type=canceled,http.request.method=PUT,http.route=/items/{id},tower.outcome=canceled,url.scheme=http}"},
		{"unknown method", metrics.Request{Method: "BREW", Route: "/pot", Scheme: "http", Status: 418, Outcome: metrics.OutcomeServed},
			"{http.request.method=_OTHER,http.response.status_code=418,http.route=/pot,tower.outcome=served,url.scheme=http}"},
		{"lowercase method", metrics.Request{Method: "get", Scheme: "http", Status: 200, Outcome: metrics.OutcomeServed},
			"{http.request.method=_OTHER,http.response.status_code=200,tower.outcome=served,url.scheme=http}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meter, reader := newReader()
			s := mustRequestSink(t, meter)
			tt.r.Protocol, tt.r.Latency = metrics.HTTPServer, 30*ms
			s.ObserveRequest(tt.r)
			s.ObserveRequest(tt.r)
			want := "http.server.request.duration" + tt.want + " count=2 sum=0.06"
			if got := histograms(t, reader); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// Each RPC is recorded with the attributes of rpc.server.call.duration or
// rpc.client.call.duration: rpc.method is the full method without its
// slash, rpc.response.status_code the code's name, error.type the code's
// name if the convention counts it as an error on that side, else the
// outcome of an RPC turned away.
func TestRequestSinkGRPC(t *testing.T) {
	server, client := "rpc.server.call.duration", "rpc.client.call.duration"
	tests := []struct {
		name string
		r    metrics.Request
		want string
	}{
		{"served", metrics.Request{Protocol: metrics.GRPCServer, Method: "/pkg.Items/Get", Outcome: metrics.OutcomeServed},
			server + "{rpc.method=pkg.Items/Get,rpc.response.status_code=OK,rpc.system.name=grpc,tower.outcome=served}"},
		{"shed, RESOURCE_EXHAUSTED", metrics.Request{Protocol: metrics.GRPCServer, Method: "/pkg.Items/Get", Status: 8, Outcome: metrics.OutcomeShed},
			server + "{error.type=shed,rpc.method=pkg.Items/Get,rpc.response.status_code=RESOURCE_EXHAUSTED,rpc.system.name=grpc,tower.outcome=shed}"},
		{"throttled", metrics.Request{Protocol: metrics.GRPCServer, Method: "/pkg.Items/Get", Status: 8, Outcome: metrics.OutcomeThrottled},
			server + "{error.type=throttled,rpc.method=pkg.Items/Get,rpc.response.status_code=RESOURCE_EXHAUSTED,rpc.system.name=grpc,tower.outcome=throttled}"},
		{"timed out", metrics.Request{Protocol: metrics.GRPCServer, Method: "/pkg.Items/Get", Status: 4, Outcome: metrics.OutcomeTimedOut},
			server + "{error.type=DEADLINE_EXCEEDED,rpc.method=pkg.Items/Get,rpc.response.status_code=DEADLINE_EXCEEDED,rpc.system.name=grpc,tower.outcome=timed_out}"},
		{"NOT_FOUND is no server error", metrics.Request{Protocol: metrics.GRPCServer, Method: "/pkg.Items/Get", Status: 5, Outcome: metrics.OutcomeError},
			server + "{rpc.method=pkg.Items/Get,rpc.response.status_code=NOT_FOUND,rpc.system.name=grpc,tower.outcome=error}"},
		{"INTERNAL", metrics.Request{Protocol: metrics.GRPCServer, Method: "/pkg.Items/Get", Status: 13, Outcome: metrics.OutcomeError},
			server + "{error.type=INTERNAL,rpc.method=pkg.Items/Get,rpc.response.status_code=INTERNAL,rpc.system.name=grpc,tower.outcome=error}"},
		{"CANCELLED is no server error", metrics.Request{Protocol: metrics.GRPCServer, Method: "/pkg.Items/Get", Status: 1, Outcome: metrics.OutcomeCanceled},
			server + "{rpc.method=pkg.Items/Get,rpc.response.status_code=CANCELLED,rpc.system.name=grpc,tower.outcome=canceled}"},
		{"unknown code", metrics.Request{Protocol: metrics.GRPCServer, Method: "/pkg.Items/Get", Status: 42, Outcome: metrics.OutcomeError},
			server + "{error.type=42,rpc.method=pkg.Items/Get,rpc.response.status_code=42,rpc.system.name=grpc,tower.outcome=error}"},
		{"UNAUTHENTICATED, the last code, is no server error", metrics.Request{Protocol: metrics.GRPCServer, Method: "/pkg.Items/Get", Status: 16, Outcome: metrics.OutcomeError},
			server + "{rpc.method=pkg.Items/Get,rpc.response.status_code=UNAUTHENTICATED,rpc.system.name=grpc,tower.outcome=error}"},
		{"first code beyond the last", metrics.Request{Protocol: metrics.GRPCServer, Method: "/pkg.Items/Get", Status: 17, Outcome: metrics.OutcomeError},
			server + "{error.type=17,rpc.method=pkg.Items/Get,rpc.response.status_code=17,rpc.system.name=grpc,tower.outcome=error}"},
		{"negative code", metrics.Request{Protocol: metrics.GRPCServer, Method: "/pkg.Items/Get", Status: -1, Outcome: metrics.OutcomeError},
			server + "{error.type=-1,rpc.method=pkg.Items/Get,rpc.response.status_code=-1,rpc.system.name=grpc,tower.outcome=error}"},
		{"no method", metrics.Request{Protocol: metrics.GRPCServer, Outcome: metrics.OutcomeServed},
			server + "{rpc.method=_OTHER,rpc.response.status_code=OK,rpc.system.name=grpc,tower.outcome=served}"},
		{"client served", metrics.Request{Protocol: metrics.GRPCClient, Method: "/pkg.Items/Get", Outcome: metrics.OutcomeServed},
			client + "{rpc.method=pkg.Items/Get,rpc.response.status_code=OK,rpc.system.name=grpc,tower.outcome=served}"},
		{"client NOT_FOUND", metrics.Request{Protocol: metrics.GRPCClient, Method: "/pkg.Items/Get", Status: 5, Outcome: metrics.OutcomeError},
			client + "{error.type=NOT_FOUND,rpc.method=pkg.Items/Get,rpc.response.status_code=NOT_FOUND,rpc.system.name=grpc,tower.outcome=error}"},
		{"client shed", metrics.Request{Protocol: metrics.GRPCClient, Method: "/pkg.Items/Get", Status: 8, Outcome: metrics.OutcomeShed},
			client + "{error.type=RESOURCE_EXHAUSTED,rpc.method=pkg.Items/Get,rpc.response.status_code=RESOURCE_EXHAUSTED,rpc.system.name=grpc,tower.outcome=shed}"},
		{"client canceled", metrics.Request{Protocol: metrics.GRPCClient, Method: "/pkg.Items/Get", Status: 1, Outcome: metrics.OutcomeCanceled},
			client + "{error.type=CANCELLED,rpc.method=pkg.Items/Get,rpc.response.status_code=CANCELLED,rpc.system.name=grpc,tower.outcome=canceled}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meter, reader := newReader()
			s := mustRequestSink(t, meter)
			tt.r.Latency = 2 * time.Second
			s.ObserveRequest(tt.r)
			if got, want := histograms(t, reader), tt.want+" count=1 sum=2"; got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// The request counts are there at zero for every outcome of every
// protocol from construction; WithProtocols limits that to the protocols
// it names, and another protocol's counts appear with its first request.
// Unknown protocols and outcomes are ignored.
func TestRequestSinkCounts(t *testing.T) {
	requests := func(t *testing.T, reader *sdkmetric.ManualReader) string {
		var lines []string
		for l := range strings.Lines(collect(t, reader)) {
			if strings.HasPrefix(l, "tower.requests") {
				lines = append(lines, strings.TrimSuffix(l, "\n"))
			}
		}
		return strings.Join(lines, "\n")
	}
	line := func(p, o string, n int) string {
		return fmt.Sprintf("tower.requests{server=a,tower.outcome=%s,tower.protocol=%s} %d", o, p, n)
	}
	zero := func(p string, except ...string) []string {
		var lines []string
		for _, o := range []string{"canceled", "error", "served", "shed", "throttled", "timed_out"} {
			n := 0
			if len(except) > 0 && except[0] == o {
				n = 1
			}
			lines = append(lines, line(p, o, n))
		}
		return lines
	}
	join := func(parts ...[]string) string {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		sort.Strings(all) // as collect sorts
		return strings.Join(all, "\n")
	}
	attrs := towerotel.WithAttributes(attribute.String("server", "a"))

	t.Run("AllProtocols", func(t *testing.T) {
		meter, reader := newReader()
		mustRequestSink(t, meter, attrs)
		if got, want := requests(t, reader), join(zero("grpc-client"), zero("grpc-server"), zero("http-server")); got != want {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("WithProtocols", func(t *testing.T) {
		meter, reader := newReader()
		s := mustRequestSink(t, meter, attrs, towerotel.WithProtocols(metrics.HTTPServer))
		if got, want := requests(t, reader), join(zero("http-server")); got != want {
			t.Errorf("before: got\n%s\nwant\n%s", got, want)
		}
		s.ObserveRequest(metrics.Request{Protocol: metrics.HTTPServer, Method: "GET", Scheme: "http", Status: 503, Outcome: metrics.OutcomeShed})
		s.ObserveRequest(metrics.Request{Protocol: metrics.GRPCClient, Method: "/a.B/C", Outcome: metrics.OutcomeServed})
		s.ObserveRequest(metrics.Request{Protocol: 0, Outcome: metrics.OutcomeServed})
		s.ObserveRequest(metrics.Request{Protocol: metrics.Protocol(metrics.NumProtocols), Outcome: metrics.OutcomeServed})
		s.ObserveRequest(metrics.Request{Protocol: metrics.GRPCServer, Outcome: 0})
		s.ObserveRequest(metrics.Request{Protocol: metrics.GRPCServer, Outcome: metrics.Outcome(metrics.NumOutcomes)})
		if got, want := requests(t, reader), join(zero("grpc-client", "served"), zero("http-server", "shed")); got != want {
			t.Errorf("after: got\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("Close", func(t *testing.T) {
		meter, reader := newReader()
		s := mustRequestSink(t, meter)
		for range 2 {
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
		}
		if got := requests(t, reader); got != "" {
			t.Errorf("after Close: got\n%s\nwant nothing", got)
		}
	})
}

// WithKnownMethods replaces the methods known; WithLatencyBuckets sets the
// buckets; WithAttributes adds to each measurement, and a key of the
// sink's own is the sink's.
func TestRequestSinkOptions(t *testing.T) {
	meter, reader := newReader()
	s := mustRequestSink(t, meter,
		towerotel.WithKnownMethods("GET", "PURGE"),
		towerotel.WithLatencyBuckets(0.1, 1),
		towerotel.WithAttributes(attribute.String("server", "a"), towerotel.OutcomeKey.String("mine")))
	for _, m := range []string{"GET", "PURGE", "POST"} {
		s.ObserveRequest(metrics.Request{Protocol: metrics.HTTPServer, Method: m, Scheme: "http", Status: 200, Outcome: metrics.OutcomeServed, Latency: 500 * ms})
	}
	var got []string
	for l := range strings.Lines(collect(t, reader)) {
		if strings.HasPrefix(l, "http.") {
			got = append(got, strings.TrimSuffix(l, "\n"))
		}
	}
	want := []string{
		"http.server.request.duration{http.request.method=GET,http.response.status_code=200,server=a,tower.outcome=served,url.scheme=http} count=1 sum=0.5 buckets=[0 1 0]",
		"http.server.request.duration{http.request.method=PURGE,http.response.status_code=200,server=a,tower.outcome=served,url.scheme=http} count=1 sum=0.5 buckets=[0 1 0]",
		"http.server.request.duration{http.request.method=_OTHER,http.response.status_code=200,server=a,tower.outcome=served,url.scheme=http} count=1 sum=0.5 buckets=[0 1 0]",
	}
	if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("got\n%s\nwant\n%s", g, w)
	}
}

// The duration histograms have the names, units, descriptions and bucket
// advice of semantic conventions 1.43.0, as its Go package has them.
func TestRequestSinkSemanticConventions(t *testing.T) {
	meter, reader := newReader()
	s := mustRequestSink(t, meter)
	for p := metrics.Protocol(1); int(p) < metrics.NumProtocols; p++ {
		s.ObserveRequest(metrics.Request{Protocol: p, Method: "GET", Scheme: "http", Outcome: metrics.OutcomeServed})
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]metricdata.Metrics{}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		got[m.Name] = m
	}
	tests := []struct{ name, unit, description string }{
		{httpconv.ServerRequestDuration{}.Name(), httpconv.ServerRequestDuration{}.Unit(), httpconv.ServerRequestDuration{}.Description()},
		{rpcconv.ServerCallDuration{}.Name(), rpcconv.ServerCallDuration{}.Unit(), rpcconv.ServerCallDuration{}.Description()},
		{rpcconv.ClientCallDuration{}.Name(), rpcconv.ClientCallDuration{}.Unit(), rpcconv.ClientCallDuration{}.Description()},
	}
	for _, tt := range tests {
		m, ok := got[tt.name]
		if !ok {
			t.Errorf("%s: not exported", tt.name)
			continue
		}
		if m.Unit != tt.unit || m.Description != tt.description {
			t.Errorf("%s: got unit %q, description %q; want %q, %q", tt.name, m.Unit, m.Description, tt.unit, tt.description)
		}
		h := m.Data.(metricdata.Histogram[float64])
		if b := h.DataPoints[0].Bounds; fmt.Sprint(b) != fmt.Sprint(towerotel.DefaultLatencyBuckets()) {
			t.Errorf("%s: got bounds %v, want %v", tt.name, b, towerotel.DefaultLatencyBuckets())
		}
	}
	if towerotel.HTTPServerDurationName != tests[0].name || towerotel.RPCServerDurationName != tests[1].name || towerotel.RPCClientDurationName != tests[2].name {
		t.Errorf("the names' constants differ from the conventions'")
	}
}

// A request of an attribute set seen before allocates nothing.
func TestRequestSinkDoesNotAllocate(t *testing.T) {
	s := mustRequestSink(t, meterOnly(), towerotel.WithAttributes(attribute.String("server", "a")))
	for name, reqs := range benchRequests {
		t.Run(name, func(t *testing.T) {
			for _, r := range reqs {
				s.ObserveRequest(r) // the first of each set makes it
				if allocs := testing.AllocsPerRun(100, func() { s.ObserveRequest(r) }); allocs != 0 {
					t.Errorf("%+v: got %v allocations, want 0", r, allocs)
				}
			}
		})
	}
	r := metrics.Request{Protocol: metrics.HTTPServer, Method: "NOTAMETHOD", Scheme: "http", Status: 200, Outcome: metrics.OutcomeServed}
	s.ObserveRequest(r)
	for i := range 3 {
		r.Method = fmt.Sprint("M", i) // each one _OTHER
		if allocs := testing.AllocsPerRun(100, func() { s.ObserveRequest(r) }); allocs != 0 {
			t.Errorf("unknown method %s: got %v allocations, want 0", r.Method, allocs)
		}
	}
}

func TestNewRequestSinkBadInput(t *testing.T) {
	meter := noop.NewMeterProvider().Meter("x")
	if _, err := towerotel.NewRequestSink(meter, towerotel.WithAttributes(), nil); err == nil || err.Error() != "towerotel.NewRequestSink: option 1 is nil" {
		t.Errorf("nil option: got error %v, want %q", err, "towerotel.NewRequestSink: option 1 is nil")
	}
	towertest.Panics(t, "towerotel.NewRequestSink: nil meter", func() { towerotel.NewRequestSink(nil) })
	towertest.Panics(t, "towerotel.NewRequestSink: nil meter", func() { towerotel.NewRequestSink((*typedNilMeter)(nil)) })
	towertest.Panics(t, "towerotel.WithProtocols: unknown protocol Protocol(0)", func() { towerotel.WithProtocols(0) })
	towertest.Panics(t, "towerotel.WithProtocols: unknown protocol Protocol(4)", func() { towerotel.WithProtocols(metrics.HTTPServer, 4) })
}
