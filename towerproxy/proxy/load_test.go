package proxy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/towergo/tower/towerproxy/proxy"
)

// A file with a mistake does not load: the error names the file and the
// line.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		name, yaml, want string
	}{
		{"unknown field", "listen: :8080\nroutes:\n  - path: /\n    upstream: a\n    colour: red\nupstreams:\n  a: {backends: [http://127.0.0.1:1]}\n",
			"proxy.yaml:5: field colour not found in Route"},
		{"bad duration", "routes: [{upstream: a}]\nupstreams:\n  a:\n    backends: [http://127.0.0.1:1]\n    timeout: {try: 5 seconds}\n",
			`proxy.yaml:5: "5 seconds" is not a duration (write it as 1.5s, 300ms or 2m)`},
		{"bad URL", "routes: [{upstream: a}]\nupstreams:\n  a:\n    backends:\n      - http://127.0.0.1:1\n      - 127.0.0.1:2\n",
			`proxy.yaml:6: "127.0.0.1:2" is not a backend URL (write it as http://host:port)`},
		{"route without upstream", "routes:\n  - path: /api\nupstreams:\n  a: {backends: [http://127.0.0.1:1]}\n",
			"proxy.yaml:2: route 1 has no upstream"},
		{"unknown upstream", "routes:\n  - path: /\n    upstream: b\nupstreams:\n  a: {backends: [http://127.0.0.1:1]}\n",
			`proxy.yaml:3: route 1: upstream "b" is not defined under upstreams`},
		{"no routes", "upstreams:\n  a: {backends: [http://127.0.0.1:1]}\n",
			"proxy.yaml:1: no routes: add at least one, as `routes: [{path: /, upstream: name}]`"},
		{"empty upstream", "routes: [{upstream: a}]\nupstreams:\n  a: {}\n",
			`proxy.yaml:3: upstream "a" needs exactly one of backends, dns and file`},
		{"bad YAML", "routes: [\n", "proxy.yaml:1: did not find expected node content"},
		{"bad rate", "routes:\n  - upstream: a\n    rate_limit: {rate: fast}\nupstreams:\n  a: {backends: [http://127.0.0.1:1]}\n",
			`proxy.yaml:3: "fast" is not a rate (write it as 100/s, 6000/m or 1/h)`},
		{"breaker delay past its max", "routes: [{upstream: a}]\nupstreams:\n  a:\n    backends: [http://127.0.0.1:1]\n    breaker: {delay: 10m}\n",
			`proxy.yaml:5: upstream "a": breaker.delay 10m0s is longer than breaker.max_delay 5m0s`},
		{"breaker without failures", "routes: [{upstream: a}]\nupstreams:\n  a:\n    backends: [http://127.0.0.1:1]\n    breaker: {failures: -1}\n",
			`proxy.yaml:5: upstream "a": breaker.failures -1 is not at least 1`},
		{"hedge percentile", "routes: [{upstream: a}]\nupstreams:\n  a:\n    backends: [http://127.0.0.1:1]\n    hedge: {percentile: 100}\n",
			`proxy.yaml:5: upstream "a": hedge.percentile 100 is not between 50 and 100`},
		{"retry status", "routes: [{upstream: a}]\nupstreams:\n  a:\n    backends: [http://127.0.0.1:1]\n    retry: {statuses: [503, 200]}\n",
			`proxy.yaml:5: upstream "a": retry.statuses has 200, not an error status`},
		{"retry methods", "routes: [{upstream: a}]\nupstreams:\n  a:\n    backends: [http://127.0.0.1:1]\n    retry: {methods: some}\n",
			`proxy.yaml:5: upstream "a": retry.methods "some" is neither idempotent nor all`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := proxy.Parse("proxy.yaml", []byte(c.yaml))
			if err == nil || err.Error() != c.want {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

// What a file leaves out, the defaults fill in.
func TestParseDefaults(t *testing.T) {
	cfg, err := proxy.Parse("proxy.yaml", []byte("routes: [{upstream: a}]\nupstreams:\n  a: {backends: [http://127.0.0.1:1]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	u := cfg.Upstreams["a"]
	if cfg.Listen != ":8080" || cfg.Admin != "127.0.0.1:9901" || cfg.Routes[0].Path != "/" || u.Limit != "gradient2" ||
		u.Retry.Attempts != 2 || u.Retry.Budget != 0.2 || time.Duration(u.Timeout.Try) != 10*time.Second || u.Outlier.MaxShare != 0.5 {
		t.Errorf("defaults: %+v, upstream %+v", cfg, u)
	}
	if !strings.Contains(u.Backends[0].String(), "127.0.0.1:1") {
		t.Errorf("backend %v", u.Backends[0])
	}
}

// The sections that turn a protection on take its defaults: a breaker
// of 5 failures, 5s to 5m; a hedge at the 95th percentile of 10s and at
// least 100 answers; a health check every 5s, 1s each, rise 2, fall 3.
func TestParseSectionDefaults(t *testing.T) {
	cfg, err := proxy.Parse("proxy.yaml", []byte("routes: [{upstream: a}]\nupstreams:\n  a:\n    backends: [http://127.0.0.1:1]\n    breaker: {}\n    hedge: {}\n    health: {path: /health}\n"))
	if err != nil {
		t.Fatal(err)
	}
	u := cfg.Upstreams["a"]
	if b := *u.Breaker; b != (proxy.Breaker{Failures: 5, Delay: proxy.Duration(5 * time.Second), MaxDelay: proxy.Duration(5 * time.Minute)}) {
		t.Errorf("breaker: got %+v", b)
	}
	if h := *u.Hedge; h != (proxy.Hedge{Percentile: 95, MinRequests: 100, Period: proxy.Duration(10 * time.Second)}) {
		t.Errorf("hedge: got %+v", h)
	}
	if h := u.Health; h != (proxy.Health{Path: "/health", Interval: proxy.Duration(5 * time.Second), Timeout: proxy.Duration(time.Second), Rise: 2, Fall: 3}) {
		t.Errorf("health: got %+v", h)
	}
	if u.Retry.Methods != "idempotent" || len(u.Retry.Statuses) != 3 || u.Breaker == nil {
		t.Errorf("retry: got %+v", u.Retry)
	}
}
