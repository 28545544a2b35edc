package proxy_test

import (
	"fmt"
	"testing"

	"github.com/towergo/tower/towerproxy/proxy"
)

// A route's local rate limit of 1 a minute per key, bursts of 2: a key's
// third request is answered 429 with Retry-After: 60, the minute until its
// next token, without reaching the backend; another key has its own
// bucket, and a request without the header is keyed by its client's
// address. A reload that keeps the limit keeps the buckets; one that
// changes it starts them full. The refusals count with the proxy's
// requests.
func TestLocalRateLimit(t *testing.T) {
	b := newCounted(t, named("b"))
	const yaml = `
routes:
  - upstream: u
    rate_limit: {key: "header:X-Key", rate: %s, burst: 2}
upstreams:
  u: {backends: [%s]}
`
	p := start(t, yaml, "1/m", b.URL)
	c := newClient(t)
	get := func(key string) answer {
		if key == "" {
			return send(t, c, "GET", p.URL+"/", "")
		}
		return send(t, c, "GET", p.URL+"/", "", "X-Key", key)
	}
	expect := func(what string, a answer, code int, retryAfter string) {
		t.Helper()
		if a.code != code || a.retryAfter != retryAfter {
			t.Errorf("%s: got %d, Retry-After %q, %v; want %d, Retry-After %q", what, a.code, a.retryAfter, a.err, code, retryAfter)
		}
	}
	for _, key := range []string{"A", ""} {
		expect(key+" 1st", get(key), 200, "")
		expect(key+" 2nd", get(key), 200, "")
		expect(key+" 3rd", get(key), 429, "60")
	}
	expect("B 1st", get("B"), 200, "")
	if b.hits() != 5 {
		t.Errorf("the backend got %d requests, want the 5 let through", b.hits())
	}
	for class, want := range map[string]float64{"2xx": 5, "4xx": 2} {
		if got := value(t, p.Registry(), "towerproxy_http_requests_total", "class", class); got != want {
			t.Errorf("towerproxy_http_requests_total{class=%q} = %v, want %v: the refusals are the proxy's answers too", class, got, want)
		}
	}

	same, err := proxy.Parse("test.yaml", fmt.Appendf(nil, yaml, "1/m", b.URL))
	if err != nil {
		t.Fatal(err)
	}
	quiet(same)
	if err := p.Reload(same); err != nil {
		t.Fatal(err)
	}
	expect("A after a reload that keeps the limit", get("A"), 429, "60")
	changed, err := proxy.Parse("test.yaml", fmt.Appendf(nil, yaml, "2/m", b.URL))
	if err != nil {
		t.Fatal(err)
	}
	quiet(changed)
	if err := p.Reload(changed); err != nil {
		t.Fatal(err)
	}
	expect("A after a reload that changes the limit", get("A"), 200, "")
}
