package proxy_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/towergo/tower/towerproxy/proxy"
)

// backend is a test backend on loopback that answers its name and counts
// its requests.
func backend(t *testing.T, name string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		fmt.Fprintf(w, "%s %s %s", name, r.Host, r.Header.Get("X-Forwarded-For"))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// front runs p behind a test server.
func front(t *testing.T, p *proxy.Proxy) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(p)
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p.Close(ctx)
	})
	return srv
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// The quick start: every request goes to one of the backends, with the
// client's Host and its address in X-Forwarded-For.
func TestQuickProxiesToBackends(t *testing.T) {
	a, na := backend(t, "a")
	b, nb := backend(t, "b")
	cfg, err := proxy.Quick(":0", []string{a.URL, b.URL})
	if err != nil {
		t.Fatal(err)
	}
	cfg.AccessLog = "off"
	p, err := proxy.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := front(t, p)
	for range 40 {
		code, body := get(t, f.URL+"/x")
		if code != 200 || !strings.HasSuffix(body, strings.TrimPrefix(f.URL, "http://")+" 127.0.0.1") {
			t.Fatalf("got %d %q", code, body)
		}
	}
	// One request at a time, the balancer sends each to the backend whose
	// latency estimate is lower; both estimates start at the same value
	// and decay from the moment their endpoint was made, so on a busy
	// machine the first one made can stay the lower for all 40 requests.
	// Only the sum is promised.
	if na.Load()+nb.Load() != 40 {
		t.Errorf("backends got %d and %d requests, want 40 between them", na.Load(), nb.Load())
	}
}

// Reloads under load lose nothing: 8 clients send requests without a
// pause while the configuration is reloaded 50 times, each time changing
// the backends of one upstream (kept, its list changed in place), the
// routes (a path moves between the two upstreams), a route's rate limit
// (its buckets start afresh), and the other upstream's timeouts (rebuilt,
// the old one closed once its requests are done; its limit carried over)
// and, every other time, its limit's algorithm (a new limit).
// Every request is answered 200. The admission's queue is 1s, so that a
// rebuilt limit, which starts with a probe at a quarter of its limit,
// makes a request wait rather than shed it; with 25ms this machine sheds
// a few of 8 closed-loop clients even without a reload, which is the
// adaptive limit's business, not the reload's.
func TestReloadLosesNothing(t *testing.T) {
	var urls []string
	var backends []*counted
	for _, name := range []string{"a", "b", "c"} {
		b := newCounted(t, named(name))
		backends = append(backends, b)
		urls = append(urls, b.URL)
	}
	config := func(i int) *proxy.Config {
		other, rate := "main", "10000/s"
		if i%2 == 1 {
			other, rate = "other", "20000/s"
		}
		limit := []string{"gradient2", "gradient2", "vegas", "vegas"}[i%4]
		yaml := fmt.Sprintf(`
admission: {queue: 1s}
routes:
  - {path: /x, upstream: %s}
  - {upstream: main, rate_limit: {rate: %s}}
upstreams:
  main: {backends: [%s, %s]}
  other: {backends: [%s], limit: %s, timeout: {try: %dms}}
`, other, rate, urls[i%3], urls[(i+1)%3], urls[(i+2)%3], limit, 1000+i)
		cfg, err := proxy.Parse("test.yaml", []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		quiet(cfg) // as startConfig does, for the reloads too
		return cfg
	}
	p := startConfig(t, config(0))
	c := newClient(t)
	var wg sync.WaitGroup
	var sent, failed atomic.Int64
	stop := make(chan struct{})
	for g := range 8 {
		wg.Go(func() {
			path := []string{"/", "/x"}[g%2]
			for {
				select {
				case <-stop:
					return
				default:
				}
				sent.Add(1)
				if a := send(t, c, "GET", p.URL+path, ""); a.code != 200 {
					if failed.Add(1) <= 5 {
						t.Errorf("%s: got %d %q, %v; want 200", path, a.code, a.body, a.err)
					}
				}
			}
		})
	}
	for i := 1; i <= 50; i++ {
		time.Sleep(20 * time.Millisecond)
		if err := p.Reload(config(i)); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if failed.Load() != 0 {
		t.Errorf("%d of %d requests failed across 50 reloads, want none", failed.Load(), sent.Load())
	}
	for i, b := range backends {
		if b.hits() == 0 {
			t.Errorf("backend %d got no request, want some", i)
		}
	}
	t.Logf("%d requests across 50 reloads", sent.Load())
}
