package proxy

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"testing"
)

// The forwarding headers of a request from an untrusted peer cost two
// allocations: the header slices, and the Forwarded element.
func TestSetForwardedAllocs(t *testing.T) {
	in := httptest.NewRequest("GET", "http://shop.example:8080/", nil)
	in.RemoteAddr = "192.0.2.7:51234"
	in.Header.Set("X-Forwarded-For", "203.0.113.9")
	out := in.Clone(t.Context())
	out.Header = http.Header{}
	pr := &httputil.ProxyRequest{In: in, Out: out}
	never := func(netip.Addr) bool { return false }
	allocs := testing.AllocsPerRun(100, func() { setForwarded(pr, never) })
	if allocs > 2 {
		t.Errorf("got %v allocations, want 2", allocs)
	}
	want := map[string]string{
		"X-Forwarded-For":   "192.0.2.7",
		"X-Forwarded-Host":  "shop.example:8080",
		"X-Forwarded-Proto": "http",
		"Forwarded":         `for=192.0.2.7;host="shop.example:8080";proto=http`,
	}
	for k, v := range want {
		if got := out.Header.Get(k); got != v {
			t.Errorf("%s: got %q, want %q", k, got, v)
		}
	}
}

// Peers' addresses as RemoteAddr has them: IPv6 bracketed and quoted in
// Forwarded, IPv4 mapped into IPv6 as IPv4, and a RemoteAddr that is no
// address as unknown, never trusted.
func TestForwardedPeers(t *testing.T) {
	for _, c := range []struct{ remote, xff, fwd string }{
		{"[2001:db8::1]:443", "2001:db8::1", `for="[2001:db8::1]";host=h;proto=http`},
		{"[::ffff:192.0.2.7]:80", "192.0.2.7", `for=192.0.2.7;host=h;proto=http`},
		{"pipe", "unknown", `for=unknown;host=h;proto=http`},
	} {
		in := httptest.NewRequest("GET", "http://h/", nil)
		in.RemoteAddr = c.remote
		out := in.Clone(t.Context())
		out.Header = http.Header{}
		setForwarded(&httputil.ProxyRequest{In: in, Out: out}, func(netip.Addr) bool { return true })
		if got := out.Header.Get("X-Forwarded-For"); got != c.xff {
			t.Errorf("%s: X-Forwarded-For %q, want %q", c.remote, got, c.xff)
		}
		if got := out.Header.Get("Forwarded"); got != c.fwd {
			t.Errorf("%s: Forwarded %q, want %q", c.remote, got, c.fwd)
		}
	}
}
