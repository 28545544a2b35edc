package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/towergo/tower/towerproxy/internal/h1"
)

// TestForwardsInTurn checks that each request reaches the next backend,
// with its hop-by-hop fields removed both ways and X-Forwarded-For set,
// and that its answer and body come back.
func TestForwardsInTurn(t *testing.T) {
	var targets []*url.URL
	for i := range 2 {
		id := string(rune('a' + i))
		b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if r.Header.Get("X-Private") != "" || r.Header.Get("Keep-Alive") != "" {
				t.Errorf("backend %s got hop-by-hop fields: %v", id, r.Header)
			}
			w.Header().Set("Connection", "X-Back")
			w.Header().Set("X-Back", "hop")
			w.Header().Set("X-Backend", id)
			io.WriteString(w, r.Header.Get("X-Forwarded-For")+" "+r.Method+" "+r.URL.RequestURI()+" "+string(body))
		}))
		defer b.Close()
		u, _ := url.Parse(b.URL)
		targets = append(targets, u)
	}
	client := h1.New(http.DefaultTransport, h1.Options{MaxIdlePerHost: 4, IdleTimeout: time.Minute})
	defer client.Close()
	front := httptest.NewServer(newHandler(targets, client))
	defer front.Close()

	for i, want := range []string{"a", "b", "a"} {
		req, _ := http.NewRequest("POST", front.URL+"/p?q=1", strings.NewReader("hi"))
		req.Header.Set("Connection", "X-Private")
		req.Header.Set("X-Private", "hop")
		req.Header.Set("Keep-Alive", "timeout=5")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := resp.Header.Get("X-Backend"); got != want {
			t.Errorf("request %d went to backend %q, want %q", i, got, want)
		}
		if resp.Header.Get("X-Back") != "" {
			t.Errorf("request %d: the backend's hop-by-hop field came back: %v", i, resp.Header)
		}
		if got := string(body); got != "127.0.0.1 POST /p?q=1 hi" {
			t.Errorf("request %d: body %q", i, got)
		}
	}
}

func TestParseTargets(t *testing.T) {
	if got, err := parseTargets("http://127.0.0.1:1,http://h:2"); err != nil || len(got) != 2 || got[1].Host != "h:2" {
		t.Errorf("parseTargets: %v, %v", got, err)
	}
	for _, bad := range []string{"", "127.0.0.1:1", "https://h:1", "http://"} {
		if _, err := parseTargets(bad); err == nil {
			t.Errorf("parseTargets(%q): no error", bad)
		}
	}
}
