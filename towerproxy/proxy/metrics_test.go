package proxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Requests served through the quick start's upstream are counted by
// route, upstream and backend; the limits are there, at their initial
// values, and every backend is healthy.
func TestMetricsRequestsAndBackends(t *testing.T) {
	a, na := backend(t, "a")
	b, nb := backend(t, "b")
	s := startObserved(t, "access_log: off\nroutes: [{path: /, upstream: web}]\nupstreams:\n  web: {backends: [{b0}, {b1}]}\n", []*httptest.Server{a, b})
	for range 30 {
		if code := doStatus(t, "GET", s.front.URL+"/x"); code != 200 {
			t.Fatalf("got %d, want 200", code)
		}
	}
	reg := s.p.Registry()
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"towerproxy_http_requests_total", []string{"class", "2xx"}, 30},
		{"towerproxy_http_request_duration_seconds", nil, 30},
		{"towerproxy_requests_total", []string{"route", "/", "upstream", "web", "class", "2xx"}, 30},
		{"towerproxy_request_duration_seconds", []string{"route", "/", "upstream", "web"}, 30},
		{"towerproxy_request_errors_total", nil, 0},
		{"towerproxy_backend_requests_total", []string{"upstream", "web", "backend", a.URL, "class", "2xx"}, float64(na.Load())},
		{"towerproxy_backend_requests_total", []string{"upstream", "web", "backend", b.URL, "class", "2xx"}, float64(nb.Load())},
		{"towerproxy_backend_request_duration_seconds", []string{"upstream", "web"}, 30},
		{"towerproxy_backend_state", []string{"upstream", "web", "state", "healthy"}, 2},
		{"towerproxy_backend_state", []string{"upstream", "web", "state", "ejected"}, 0},
		{"towerproxy_upstream_limit", []string{"upstream", "web"}, 100},
		{"towerproxy_limit", nil, 1000},
		{"towerproxy_upstream_in_flight", []string{"upstream", "web"}, 0},
		{"towerproxy_in_flight", nil, 0},
		{"towerproxy_retry_budget_ratio", []string{"upstream", "web"}, 0.2},
		{"towerproxy_retries_total", []string{"upstream", "web"}, 0},
		{"towerproxy_shed_total", nil, 0},
	} {
		if got := value(t, reg, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// One after another, the requests may all go to one backend (see
	// TestQuickProxiesToBackends): only the sum is promised.
	if na.Load()+nb.Load() != 30 {
		t.Errorf("backends got %d and %d requests, want 30 between them", na.Load(), nb.Load())
	}

	res, err := http.Get(s.admin.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(res.Body)
	res.Body.Close()
	want := `towerproxy_requests_total{class="2xx",route="/",upstream="web"} 30`
	if !strings.Contains(string(text), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}

// A backend that answers 503 is retried on the other, ejected after five
// failures in a row, and shown ejected.
//
// The good backend takes 10ms and the requests come 8 at once, so that
// the balancer, which sends each request to the less loaded of the two,
// sends some to the bad one, whichever it came to prefer first.
func TestMetricsRetriesAndEjection(t *testing.T) {
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(10 * time.Millisecond)
	}))
	t.Cleanup(good.Close)
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(bad.Close)
	s := startObserved(t, "access_log: off\nroutes: [{path: /, upstream: web}]\nupstreams:\n  web: {backends: [{b0}, {b1}]}\n", []*httptest.Server{good, bad})
	reg := s.p.Registry()
	ejected := func() bool { return value(t, reg, "towerproxy_ejections_total", "upstream", "web") == 1 }
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := 0; i < 200 && !ejected(); i++ {
				doStatus(t, "GET", s.front.URL+"/")
			}
		})
	}
	wg.Wait()
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"towerproxy_ejections_total", []string{"upstream", "web"}, 1},
		{"towerproxy_upstream_ejected", []string{"upstream", "web"}, 1},
		{"towerproxy_backend_state", []string{"backend", bad.URL, "state", "ejected"}, 1},
		{"towerproxy_backend_state", []string{"backend", bad.URL, "state", "healthy"}, 0},
		{"towerproxy_backend_state", []string{"backend", good.URL, "state", "healthy"}, 1},
	} {
		if got := value(t, reg, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	failed := value(t, reg, "towerproxy_backend_requests_total", "backend", bad.URL, "class", "5xx")
	retries := value(t, reg, "towerproxy_retries_total", "upstream", "web")
	if failed < 5 || retries < 1 {
		t.Errorf("the bad backend failed %v attempts, with %v retries; want at least 5 and 1", failed, retries)
	}
}

// A request over the upstream's limit, with no time to wait for it, is
// shed: 503, counted by reason.
func TestMetricsShedByUpstreamLimit(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	t.Cleanup(slow.Close)
	s := startObserved(t, "access_log: off\nadmission: {queue: 0s}\nroutes: [{path: /, upstream: web}]\nupstreams:\n  web: {backends: [{b0}]}\n", []*httptest.Server{slow})
	reg := s.p.Registry()
	codes := make(chan int, 30)
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() { codes <- doStatus(t, "GET", s.front.URL+"/") })
	}
	if !within(5*time.Second, func() bool {
		return value(t, reg, "towerproxy_shed_total", "reason", "upstream_limit", "upstream", "web") > 0
	}) {
		t.Fatal("nothing was shed")
	}
	once.Do(func() { close(release) })
	wg.Wait()
	close(codes)
	n503 := 0
	for c := range codes {
		if c == http.StatusServiceUnavailable {
			n503++
		}
	}
	shed := value(t, reg, "towerproxy_shed_total", "reason", "upstream_limit", "upstream", "web")
	errs := value(t, reg, "towerproxy_request_errors_total", "reason", "upstream_limit")
	if float64(n503) != shed || shed != errs {
		t.Errorf("got %d answers 503, %v shed, %v errors by the upstream's limit; want the same number", n503, shed, errs)
	}
}

// A backend that fails its active health checks is shown down, and one
// whose breaker opened is shown breaker_open: the endpoints' health
// checker and breaker report to the backend's observer.
func TestMetricsBackendDownAndBreakerOpen(t *testing.T) {
	good := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(good.Close)
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "sick", http.StatusInternalServerError)
	}))
	t.Cleanup(sick.Close)
	s := startObserved(t, `
access_log: off
admission: {limit: "off"}
routes: [{path: /b, upstream: broken}, {path: /, upstream: checked}]
upstreams:
  checked:
    backends: [{b0}, {b1}]
    health: {path: /health, interval: 20ms, rise: 2, fall: 2}
  broken:
    backends: [{b1}]
    limit: "off"
    retry: {attempts: 1}
    outlier: {off: true}
    breaker: {failures: 3, delay: 1m}
`, []*httptest.Server{good, sick})
	reg := s.p.Registry()
	state := func(upstream, backend, state string) float64 {
		return value(t, reg, "towerproxy_backend_state", "upstream", upstream, "backend", backend, "state", state)
	}
	if !within(5*time.Second, func() bool { return state("checked", sick.URL, "down") == 1 }) {
		t.Errorf("the backend failing its health checks: down = %v, want 1", state("checked", sick.URL, "down"))
	}
	if got := state("checked", good.URL, "healthy"); got != 1 {
		t.Errorf("the backend passing its health checks: healthy = %v, want 1", got)
	}
	for range 3 {
		doStatus(t, "GET", s.front.URL+"/b")
	}
	if got := state("broken", sick.URL, "breaker_open"); got != 1 {
		t.Errorf("the backend that failed 3 times in a row: breaker_open = %v, want 1", got)
	}
}

// The whole proxy's limit is not lowered by what an upstream sheds: that
// is the upstream's overload, not the proxy's.
func TestAdmissionLimitKeepsThroughUpstreamSheds(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	s := startObserved(t, "access_log: off\nadmission: {queue: 0s}\nroutes: [{path: /, upstream: web}]\nupstreams:\n  web: {backends: [{b0}]}\n", []*httptest.Server{slow})
	reg := s.p.Registry()
	// Hold the upstream's limit full, then have requests shed by it for
	// longer than the admission's windows.
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() { doStatus(t, "GET", s.front.URL+"/") })
	}
	// A request the limit lets in waits on the backend: it gives up soon,
	// so that the loop goes on.
	c := &http.Client{Timeout: 300 * time.Millisecond}
	t.Cleanup(c.CloseIdleConnections)
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); {
		if res, err := c.Get(s.front.URL + "/"); err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	}
	if shed := value(t, reg, "towerproxy_shed_total", "reason", "upstream_limit", "upstream", "web"); shed == 0 {
		t.Fatal("nothing was shed by the upstream")
	}
	if got := value(t, reg, "towerproxy_limit"); got != 1000 {
		t.Errorf("the whole proxy's limit is %v after the upstream's sheds, want 1000 kept", got)
	}
	once.Do(func() { close(release) })
	wg.Wait()
}
