package proxy

import (
	"net/http"
	"testing"
)

// A request's key: its client's address without the port, brackets off
// an IPv6 one, or a header's value, or the address without the header.
// Drawing it allocates nothing.
func TestKeyOf(t *testing.T) {
	for _, tt := range []struct {
		key, remote, header, want string
	}{
		{"client_ip", "192.0.2.1:5678", "", "192.0.2.1"},
		{"client_ip", "[2001:db8::1]:80", "", "2001:db8::1"},
		{"client_ip", "[fe80::1%eth0]:80", "", "fe80::1%eth0"},
		{"client_ip", "pipe", "", "pipe"},
		{"header:x-api-key", "192.0.2.1:5678", "k1", "k1"},
		{"header:x-api-key", "192.0.2.1:5678", "", "192.0.2.1"},
	} {
		r := &http.Request{RemoteAddr: tt.remote, Header: http.Header{}}
		if tt.header != "" {
			r.Header.Set("X-Api-Key", tt.header)
		}
		f := keyOf(tt.key)
		if got := f(r); got != tt.want {
			t.Errorf("%s of %q, header %q: got %q, want %q", tt.key, tt.remote, tt.header, got, tt.want)
		}
		if n := testing.AllocsPerRun(100, func() { f(r) }); n != 0 {
			t.Errorf("%s of %q: %v allocations, want 0", tt.key, tt.remote, n)
		}
	}
}
