package proxy_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/towergo/tower/towerproxy/proxy"
)

// BenchmarkObserved is one GET through the proxy to a backend on
// loopback, as a client sees it, with the observability of each
// configuration: metrics alone (they are always on), with the access log
// in a file, and traced. The allocations are the whole request's, the
// client's and the backend's included; the differences between the
// configurations are what the access log and the traces cost: a record
// per request, the line, the spans.
func BenchmarkObserved(b *testing.B) {
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	b.Cleanup(be.Close)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	b.Cleanup(func() { tp.Shutdown(b.Context()) })
	for _, c := range []struct {
		name, log string
		opts      []proxy.Option
	}{
		{"metrics", "off", nil},
		{"access-log", filepath.Join(b.TempDir(), "access.log"), nil},
		{"traced", "off", []proxy.Option{proxy.WithTracerProvider(tp)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := startObserved(b, "access_log: "+c.log+"\nroutes: [{path: /, upstream: web}]\nupstreams:\n  web: {backends: [{b0}]}\n", []*httptest.Server{be}, c.opts...)
			client := s.front.Client()
			b.ReportAllocs()
			for b.Loop() {
				res, err := client.Get(s.front.URL + "/")
				if err != nil {
					b.Fatal(err)
				}
				res.Body.Close()
				exp.Reset()
			}
		})
	}
}
