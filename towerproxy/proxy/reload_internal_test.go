package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A reload that changes an upstream's backends keeps its limited service,
// and what its limit learned, and switches its leaf to the new backends;
// one that changes its limit's algorithm builds a new one.
func TestReloadKeepsLimit(t *testing.T) {
	backend := func(name string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) }))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	a, b := backend("a"), backend("b")
	cfgA, _ := Quick(":0", []string{a})
	cfgB, _ := Quick(":0", []string{b})
	cfgAIMD, _ := Quick(":0", []string{b})
	cfgAIMD.Upstreams["default"].Limit = "aimd"
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
		t.Fatalf("the upstream whose backends changed was kept, want a new one")
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
