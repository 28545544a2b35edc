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
	if na.Load() == 0 || nb.Load() == 0 || na.Load()+nb.Load() != 40 {
		t.Errorf("backends got %d and %d requests, want 40 spread over both", na.Load(), nb.Load())
	}
}

// A reload under load loses no request: routes move to a new upstream at
// once, the old one closes once its requests are done. The limits are
// off: a new adaptive limit's first probe lets 5 of the 8 clients in and
// sheds the others (at GOMAXPROCS 1, in every run), which is no reload's
// doing; TestReloadKeepsLimit checks that a reload keeps the limit it
// had.
func TestReloadLosesNothing(t *testing.T) {
	a, _ := backend(t, "a")
	b, nb := backend(t, "b")
	cfgA, _ := proxy.Quick(":0", []string{a.URL})
	cfgB, _ := proxy.Quick(":0", []string{b.URL})
	for _, cfg := range []*proxy.Config{cfgA, cfgB} {
		cfg.Admission.Limit, cfg.Upstreams["default"].Limit = "off", "off"
	}
	p, err := proxy.New(cfgA)
	if err != nil {
		t.Fatal(err)
	}
	f := front(t, p)
	var wg sync.WaitGroup
	var bad atomic.Int64
	stop := make(chan struct{})
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if code, _ := get(t, f.URL+"/"); code != 200 {
					bad.Add(1)
				}
			}
		})
	}
	for i := range 20 {
		time.Sleep(10 * time.Millisecond)
		cfg := cfgA
		if i%2 == 0 {
			cfg = cfgB
		}
		if err := p.Reload(cfg); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if bad.Load() != 0 || nb.Load() == 0 {
		t.Errorf("%d requests failed across 20 reloads, b served %d; want 0 and some", bad.Load(), nb.Load())
	}
}
