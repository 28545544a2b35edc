package proxy_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
)

// logLine is an access log line, as JSON decodes it.
type logLine map[string]any

// readLog returns the lines of the access log at path once it has n.
func readLog(t *testing.T, path string, n int) []logLine {
	t.Helper()
	var lines []logLine
	within(5*time.Second, func() bool {
		data, _ := os.ReadFile(path)
		lines = nil
		for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			var line logLine
			if err := json.Unmarshal(l, &line); err != nil {
				t.Fatalf("a line is not JSON: %s", l)
			}
			lines = append(lines, line)
		}
		return len(lines) >= n
	})
	if len(lines) != n {
		t.Fatalf("got %d lines, want %d", len(lines), n)
	}
	return lines
}

// Each request has its line in the access log, with where it went, how
// many attempts it took, and why it was retried or shed.
func TestAccessLog(t *testing.T) {
	var flaky atomic.Int64
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/flaky" && flaky.Add(1) == 1 {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("hello"))
	}))
	t.Cleanup(b.Close)
	path := filepath.Join(t.TempDir(), "access.log")
	s := startObserved(t, `access_log: `+path+`
routes:
  - {path: /limited, upstream: web, rate_limit: {rate: 1/m, burst: 1}}
  - {path: /, upstream: web}
upstreams:
  web: {backends: [{b0}]}
`, []*httptest.Server{b})
	for _, r := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/", 200},
		{"GET", "/flaky", 200},
		{"POST", "/flaky", 200},
		{"GET", "/limited", 200},
		{"GET", "/limited", 429},
		{"GET", "/nowhere", 200},
	} {
		if code := doStatus(t, r.method, s.front.URL+r.path); code != r.want {
			t.Fatalf("%s %s: got %d, want %d", r.method, r.path, code, r.want)
		}
	}
	lines := readLog(t, path, 6)
	host := s.front.Listener.Addr().String()
	want := []logLine{
		{"method": "GET", "path": "/", "status": 200.0, "bytes": 5.0, "route": "/", "upstream": "web", "backend": b.URL, "attempts": 1.0},
		{"method": "GET", "path": "/flaky", "status": 200.0, "bytes": 5.0, "route": "/", "upstream": "web", "backend": b.URL, "attempts": 2.0, "retried": []any{"status 503"}},
		{"method": "POST", "path": "/flaky", "status": 200.0, "bytes": 5.0, "route": "/", "upstream": "web", "backend": b.URL, "attempts": 1.0},
		{"method": "GET", "path": "/limited", "status": 200.0, "bytes": 5.0, "route": "/limited", "upstream": "web", "backend": b.URL, "attempts": 1.0},
		{"method": "GET", "path": "/limited", "status": 429.0, "bytes": 18.0, "route": "/limited", "upstream": "web", "shed": "rate_limit"},
		{"method": "GET", "path": "/nowhere", "status": 200.0, "bytes": 5.0, "route": "/", "upstream": "web", "backend": b.URL, "attempts": 1.0},
	}
	for i, line := range lines {
		for _, k := range []string{"time", "level", "msg", "duration_ms", "client", "host"} {
			if _, ok := line[k]; !ok {
				t.Errorf("line %d has no %s: %v", i+1, k, line)
			}
			if k != "client" && k != "host" {
				delete(line, k)
			}
		}
		if line["host"] != host || line["client"] != "127.0.0.1" {
			t.Errorf("line %d: host %v, client %v; want %s, 127.0.0.1", i+1, line["host"], line["client"], host)
		}
		delete(line, "host")
		delete(line, "client")
		if !reflect.DeepEqual(line, want[i]) {
			t.Errorf("line %d:\ngot  %v\nwant %v", i+1, line, want[i])
		}
	}
}

// A request the proxy could not get an answer for says why.
func TestAccessLogFailure(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // nothing listens there any more
	path := filepath.Join(t.TempDir(), "access.log")
	s := startObserved(t, "access_log: "+path+"\nroutes: [{path: /, upstream: web}]\nupstreams:\n  web: {backends: [{b0}], outlier: {off: true}}\n", []*httptest.Server{gone})
	if code := doStatus(t, "GET", s.front.URL+"/"); code != http.StatusBadGateway {
		t.Fatalf("got %d, want 502", code)
	}
	line := readLog(t, path, 1)[0]
	if line["status"] != 502.0 || line["attempts"] != 2.0 || line["error"] == nil {
		t.Errorf("got %v, want status 502, 2 attempts and an error", line)
	}
	if line["error"] != nil && !bytes.HasPrefix([]byte(line["error"].(string)), []byte("bad_gateway: ")) {
		t.Errorf("got error %q, want bad_gateway: ...", line["error"])
	}
}
