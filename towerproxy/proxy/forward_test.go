package proxy_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// headerBackend answers the request's headers, as JSON, and sends the
// response's hop-by-hop headers a proxy must not pass on.
func headerBackend(t *testing.T) string {
	return newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "X-Hop")
		w.Header().Set("X-Hop", "1")
		w.Header().Set("Keep-Alive", "timeout=5")
		w.Header().Set("Proxy-Authenticate", "Basic")
		w.Header().Set("X-End", "kept")
		json.NewEncoder(w).Encode(r.Header)
	})).URL
}

// getHeaders sends a GET with the headers h to the proxy at url, and
// returns the headers the backend got, and the response.
func getHeaders(t *testing.T, url string, h map[string]string) (http.Header, *http.Response) {
	t.Helper()
	req := mustRequest(t, "GET", url, nil)
	for k, v := range h {
		req.Header.Set(k, v)
	}
	res, body := do(t, client(t), req)
	var got http.Header
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("%d %q: %v", res.StatusCode, body, err)
	}
	return got, res
}

// The forwarding headers a client sends are believed only from a trusted
// peer, and appended to; from any other peer they are replaced.
func TestForwardedHeaders(t *testing.T) {
	backend := headerBackend(t)
	lies := map[string]string{
		"X-Forwarded-For":   "203.0.113.7",
		"X-Forwarded-Host":  "shop.example",
		"X-Forwarded-Proto": "https",
		"Forwarded":         "for=203.0.113.7;host=shop.example;proto=https",
	}
	for _, c := range []struct {
		name, top string
		want      func(host string) map[string]string
	}{
		{"untrusted", "trusted_proxies: [10.0.0.0/8]", func(host string) map[string]string {
			return map[string]string{
				"X-Forwarded-For":   "127.0.0.1",
				"X-Forwarded-Host":  host,
				"X-Forwarded-Proto": "http",
				"Forwarded":         `for=127.0.0.1;host="` + host + `";proto=http`,
			}
		}},
		{"trusted", "trusted_proxies: [10.0.0.0/8, 127.0.0.1]", func(host string) map[string]string {
			return map[string]string{
				"X-Forwarded-For":   "203.0.113.7, 127.0.0.1",
				"X-Forwarded-Host":  "shop.example",
				"X-Forwarded-Proto": "https",
				"Forwarded":         `for=203.0.113.7;host=shop.example;proto=https, for=127.0.0.1;host="` + host + `";proto=http`,
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := startProxy(t, config([]string{backend}, c.top, ""))
			got, _ := getHeaders(t, p.URL("/"), lies)
			for k, v := range c.want(p.Addr) {
				if g := strings.Join(got[k], " | "); g != v {
					t.Errorf("%s: got %q, want %q", k, g, v)
				}
			}
		})
	}
	t.Run("no headers, trusted", func(t *testing.T) {
		p := startProxy(t, config([]string{backend}, "trusted_proxies: [127.0.0.0/8]", ""))
		got, _ := getHeaders(t, p.URL("/"), nil)
		if g := got.Get("X-Forwarded-For"); g != "127.0.0.1" {
			t.Errorf("X-Forwarded-For: got %q, want 127.0.0.1", g)
		}
		if g := got.Get("X-Forwarded-Host"); g != p.Addr {
			t.Errorf("X-Forwarded-Host: got %q, want %q", g, p.Addr)
		}
	})
}

// Hop-by-hop headers go no further than the proxy, both ways: Connection
// and the headers it names, Keep-Alive, TE but for trailers, Upgrade
// without an upgrade, Proxy-Connection, Proxy-Authorization,
// Proxy-Authenticate, and Proxy (httpoxy).
func TestHopByHopHeadersRemoved(t *testing.T) {
	p := startProxy(t, config([]string{headerBackend(t)}, "", ""))
	got, res := getHeaders(t, p.URL("/"), map[string]string{
		"Connection":          "X-Secret, keep-alive",
		"X-Secret":            "1",
		"Keep-Alive":          "timeout=5",
		"Te":                  "trailers, deflate",
		"Upgrade":             "h2c",
		"Proxy-Connection":    "keep-alive",
		"Proxy-Authorization": "Basic Zm9vOmJhcg==",
		"Proxy":               "http://evil.example:3128",
		"X-End":               "kept",
	})
	for _, k := range []string{"Connection", "X-Secret", "Keep-Alive", "Upgrade", "Proxy-Connection", "Proxy-Authorization", "Proxy"} {
		if v, ok := got[k]; ok {
			t.Errorf("the backend got %s: %q, want none", k, v)
		}
	}
	if g := got.Get("Te"); g != "trailers" {
		t.Errorf("the backend got TE %q, want trailers", g)
	}
	if g := got.Get("X-End"); g != "kept" {
		t.Errorf("the backend got X-End %q, want kept", g)
	}
	for _, k := range []string{"X-Hop", "Keep-Alive", "Proxy-Authenticate"} {
		if v, ok := res.Header[k]; ok {
			t.Errorf("the client got %s: %q, want none", k, v)
		}
	}
	if g := res.Header.Get("X-End"); g != "kept" {
		t.Errorf("the client got X-End %q, want kept", g)
	}
}
