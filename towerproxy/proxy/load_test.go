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
