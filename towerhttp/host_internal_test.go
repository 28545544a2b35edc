package towerhttp

import "testing"

func TestCanonicalHost(t *testing.T) {
	for _, tt := range []struct {
		scheme, host, want string
	}{
		{"http", "example.com", "example.com"},
		{"http", "EXAMPLE.com", "example.com"},
		{"http", "example.com.", "example.com"},
		{"http", "example.com:80", "example.com"},
		{"http", "Example.COM.:80", "example.com"},
		{"http", "example.com:", "example.com"},
		{"http", "example.com:443", "example.com:443"},
		{"http", "example.com:8080", "example.com:8080"},
		{"http", "Example.com.:8080", "example.com:8080"},
		{"https", "example.com:443", "example.com"},
		{"https", "example.com:80", "example.com:80"},
		{"ws", "example.com:80", "example.com:80"},
		{"http", "10.0.0.1:80", "10.0.0.1"},
		{"http", "[::1]", "[::1]"},
		{"http", "[::1]:80", "[::1]"},
		{"https", "[FE80::1]:443", "[fe80::1]"},
		{"http", "[fe80::1%25En0]:8080", "[fe80::1%25En0]:8080"},
		{"http", "[FE80::1%25En0]", "[fe80::1%25En0]"},
		{"http", "", ""},
	} {
		if got := canonicalHost(tt.scheme, tt.host); got != tt.want {
			t.Errorf("canonicalHost(%q, %q): got %q, want %q", tt.scheme, tt.host, got, tt.want)
		}
	}
}

// A host already canonical, or one that only drops a default port or a
// trailing dot, costs no allocation.
func TestCanonicalHostDoesNotAllocate(t *testing.T) {
	for _, host := range []string{"example.com", "example.com:8080", "[::1]:8443", "example.com:80", "example.com."} {
		if n := testing.AllocsPerRun(100, func() { sinkHost = canonicalHost("http", host) }); n != 0 {
			t.Errorf("canonicalHost(%q): got %v allocations, want 0", host, n)
		}
	}
}

var sinkHost string
