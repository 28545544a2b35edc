package proxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// What a reload keeps: an upstream whose configuration is the same, or
// differs only in its list of backends; not one whose admission queue
// changed, which its limit waits as long as, nor one whose other settings
// changed. The proxy's admission is kept while its limit and queue are.
func TestReloadKeeps(t *testing.T) {
	parse := func(queue, backends, limit string) *Config {
		cfg, err := Parse("test.yaml", fmt.Appendf(nil, `
admission: {queue: %s}
routes: [{upstream: u}]
upstreams:
  u: {backends: [%s], limit: %s}
`, queue, backends, limit))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	p, err := New(parse("25ms", "http://127.0.0.1:1", "gradient2"), WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p.Close(ctx)
	}()
	for _, tt := range []struct {
		name                   string
		cfg                    *Config
		keepsUpstream, keepsAd bool
	}{
		{"the same", parse("25ms", "http://127.0.0.1:1", "gradient2"), true, true},
		{"other backends", parse("25ms", "http://127.0.0.1:2, http://127.0.0.1:3", "gradient2"), true, true},
		{"another queue", parse("50ms", "http://127.0.0.1:2, http://127.0.0.1:3", "gradient2"), false, false},
		{"another limit", parse("50ms", "http://127.0.0.1:2, http://127.0.0.1:3", "vegas"), false, true},
	} {
		before := p.state.Load()
		if err := p.Reload(tt.cfg); err != nil {
			t.Fatal(err)
		}
		after := p.state.Load()
		if kept := after.upstreams["u"] == before.upstreams["u"]; kept != tt.keepsUpstream {
			t.Errorf("%s: upstream kept %v, want %v", tt.name, kept, tt.keepsUpstream)
		}
		if kept := after.admission == before.admission; kept != tt.keepsAd {
			t.Errorf("%s: admission kept %v, want %v", tt.name, kept, tt.keepsAd)
		}
	}
	d := p.state.Load().upstreams["u"].static
	d.mu.Lock()
	got := d.seen
	d.mu.Unlock()
	if len(got) != 2 || !got["http://127.0.0.1:2"] || !got["http://127.0.0.1:3"] {
		t.Errorf("the kept upstream's backends: got %v, want :2 and :3", got)
	}
}

// A reload that changes an upstream other than in its backends (here its
// try timeout too) builds it anew, but keeps its limited service, and
// what its limit learned, and switches its leaf to the new upstream; one
// that changes its limit's algorithm builds a new limit.
func TestReloadKeepsLimit(t *testing.T) {
	backend := func(name string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) }))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	a, b := backend("a"), backend("b")
	cfgA, _ := Quick(":0", []string{a})
	cfgB, _ := Quick(":0", []string{b})
	cfgB.Upstreams["default"].Timeout.Try /= 2
	cfgAIMD, _ := Quick(":0", []string{b})
	cfgAIMD.Upstreams["default"].Limit = "aimd"
	for _, c := range []*Config{cfgA, cfgB, cfgAIMD} {
		c.AccessLog = "off"
	}
	p, err := New(cfgA)
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	t.Cleanup(func() {
		front.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p.Close(ctx)
	})
	get := func() string {
		res, err := http.Get(front.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return string(body)
	}
	svc := func() any { return p.state.Load().upstreams["default"].svc }

	before, up := svc(), p.state.Load().upstreams["default"]
	if got := get(); got != "a" {
		t.Fatalf("got %q, want a", got)
	}
	if err := p.Reload(cfgB); err != nil {
		t.Fatal(err)
	}
	if p.state.Load().upstreams["default"] == up {
		t.Fatalf("the upstream whose timeout changed was kept, want a new one")
	}
	if svc() != before {
		t.Errorf("the reload built a new limit for an upstream whose limit did not change, want the old one kept")
	}
	if got := get(); got != "b" {
		t.Errorf("after the reload: got %q, want b", got)
	}
	if err := p.Reload(cfgAIMD); err != nil {
		t.Fatal(err)
	}
	if svc() == before {
		t.Errorf("the reload kept the limit of gradient2 for aimd, want a new one")
	}
	if got := get(); got != "b" {
		t.Errorf("after the second reload: got %q, want b", got)
	}
}
