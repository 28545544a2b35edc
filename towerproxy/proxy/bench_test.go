package proxy_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/towergo/tower/towerproxy/proxy"
)

// BenchmarkServeHTTP is one GET through the proxy's handler to a backend
// on loopback, with the defaults, with every protection of an upstream
// and a route on (a hedge armed by none: with too few answers), and on a
// route of a priority other than normal: what each adds per request is the
// difference. Most of each is net/http's (the reverse proxy, the
// backend's transport). The access log is off: BenchmarkObserved says
// what it costs.
func BenchmarkServeHTTP(b *testing.B) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer backend.Close()
	for _, bc := range []struct{ name, route, upstream string }{
		{"defaults", "", ""},
		{"all on", `, rate_limit: {key: "header:X-Key", rate: 1000000/s}`,
			`, health: {path: /, interval: 1s}, breaker: {}, hedge: {min_requests: 1000000}, retry: {attempts: 3}`},
		{"critical route", `, priority: critical`, ""},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg, err := proxy.Parse("bench.yaml", fmt.Appendf(nil, `
access_log: off
admission: {priority_header: X-Priority}
routes: [{upstream: u%s}]
upstreams:
  u: {backends: [%s]%s}
`, bc.route, backend.URL, bc.upstream))
			if err != nil {
				b.Fatal(err)
			}
			p, err := proxy.New(cfg, proxy.WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close(b.Context())
			req := httptest.NewRequest("GET", "http://front.example/", nil)
			req.RemoteAddr = "192.0.2.1:1234"
			req.Header.Set("X-Key", "k")
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				p.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("got %d %q", w.Code, w.Body)
				}
			}
		})
	}
}
