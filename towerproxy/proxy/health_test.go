package proxy_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// healthy is a backend whose /health answers 200 or 503 as its flag says,
// and every other path 200 with its name; it counts only the latter.
type healthy struct {
	*counted
	ok atomic.Bool
}

func newHealthy(t *testing.T, name string) *healthy {
	h := &healthy{}
	h.ok.Store(true)
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		if !h.ok.Load() {
			http.Error(w, "sick", http.StatusServiceUnavailable)
		}
	})
	h.counted = newCounted(t, named(name))
	h.Config.Handler = mux
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.n.Add(1)
		named(name)(w, r)
	}))
	return h
}

// Active health checks through the proxy, on loopback (the adaptive
// limits off, which are not what this tests): a backend whose
// check fails 3 times in a row gets no request until it passes 2 in a
// row; meanwhile the other serves all, and no request fails. With both
// down, a request is answered 503 with Retry-After at once.
func TestHealthChecks(t *testing.T) {
	a, b := newHealthy(t, "a"), newHealthy(t, "b")
	p := start(t, `
admission: {limit: "off"}
routes: [{upstream: u}]
upstreams:
  u:
    backends: [%s, %s]
    limit: "off"
    health: {path: /health, interval: 20ms, timeout: 1s, rise: 2, fall: 3}
`, a.URL, b.URL)
	c := newClient(t)
	// batch sends 80 requests, 8 at a time, so that the balancer's loads
	// (latency × requests in flight) spread them.
	batch := func() {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 10 {
					if r := send(t, c, "GET", p.URL+"/", ""); r.code != 200 {
						t.Errorf("got %d %q, %v; want 200", r.code, r.body, r.err)
					}
				}
			})
		}
		wg.Wait()
	}
	batch()
	if a.hits() == 0 || b.hits() == 0 {
		t.Fatalf("a got %d requests and b %d, want both some", a.hits(), b.hits())
	}

	b.ok.Store(false)
	eventually(t, "b marked down", func() bool { return p.logs.count("proxy: backend down") == 1 })
	before := b.hits()
	batch()
	if b.hits() != before {
		t.Errorf("b got %d requests while down, want 0", b.hits()-before)
	}

	b.ok.Store(true)
	eventually(t, "b marked up", func() bool { return p.logs.count("proxy: backend up") == 1 })
	before = b.hits()
	batch()
	if b.hits() == before {
		t.Error("b got no request once up again, want some")
	}

	a.ok.Store(false)
	b.ok.Store(false)
	eventually(t, "both marked down", func() bool { return p.logs.count("proxy: backend down") == 3 })
	began := time.Now()
	r := send(t, c, "GET", p.URL+"/", "")
	if took := time.Since(began); r.code != 503 || r.retryAfter == "" || took > time.Second {
		t.Errorf("with both down: got %d, Retry-After %q, after %v; want 503 with Retry-After at once", r.code, r.retryAfter, took)
	}
}
