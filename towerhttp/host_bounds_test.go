package towerhttp

import (
	"net/url"
	"testing"
)

// canonicalHost at the edges of what it decides: which characters are
// upper case, where the port's colon is, which ports are dropped.
func TestCanonicalHostBounds(t *testing.T) {
	for _, tt := range []struct {
		name, scheme, host, want string
	}{
		// Upper case is 'A' to 'Z', both ends included, in the glance
		// at the host, in the search for the first upper case letter and
		// in the lowering; '@' and '[' just outside are left alone.
		{"A first", "http", "A.example", "a.example"},
		{"Z first", "http", "Z.example", "z.example"},
		{"A later", "http", "xA.example", "xa.example"},
		{"Z later", "http", "xZ.example", "xz.example"},
		{"@ and [ are not letters", "ws", "@[", "@["},
		{"@ and [ are not lowered", "ws", "X@[", "x@["},
		// Letters only, or upper case with dots and digits: nothing
		// but upper case tells the glance that a host needs lowering.
		{"letters only", "http", "LOCALHOST", "localhost"},
		{"upper case and dots", "http", "EXAMPLE.COM", "example.com"},
		{"upper case, dots and digits", "http", "WWW2.EXAMPLE.COM", "www2.example.com"},

		// The port's colon may be the host's first character: an empty
		// name with a port, which is dropped if it is the default.
		{"colon first, default port", "http", ":80", ""},
		{"colon first, other port", "http", ":8080", ":8080"},
		{"colon only", "http", ":", ""},
		{"two colons", "http", "::", ":"},

		// A port is digits '0' to '9', both ends included: the name
		// before it loses its trailing dot.
		{"port 0", "http", "example.com.:0", "example.com:0"},
		{"port 9", "http", "example.com.:9", "example.com:9"},
		{"port 65535", "http", "example.com.:65535", "example.com:65535"},
		// No range check: a port beyond 65535 is kept, as url.URL.Port
		// keeps it, and the dial refuses it.
		{"port 65536", "http", "example.com.:65536", "example.com:65536"},
		// Only the default's exact spelling is dropped.
		{"port 080", "http", "example.com:080", "example.com:080"},
		{"port 0443", "https", "example.com:0443", "example.com:0443"},
		// '/' and ':' just outside the digits: no port, so the dot
		// before the colon is not trailing and stays.
		{"slash after colon", "http", "example.com.:/", "example.com.:/"},
		{"colon after colon", "http", "example.com.::", "example.com.:"},
		{"letter in port", "http", "Example.com.:8a", "example.com.:8a"},

		// An IPv6 literal: the colons inside the brackets are not the
		// port's, the zone keeps its case, and a dot is not trimmed.
		{"IPv6, no port", "http", "[::1]", "[::1]"},
		{"IPv6 upper case, port 9", "http", "[FE80::9]:9", "[fe80::9]:9"},
		{"IPv6 zone first", "http", "[%25En0]", "[%25En0]"},
		{"IPv6 zone, no port", "https", "[FE80::A%25En0]", "[fe80::a%25En0]"},
		{"IPv6 zone, default port", "https", "[FE80::Z%25En0]:443", "[fe80::z%25En0]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := canonicalHost(tt.scheme, tt.host); got != tt.want {
				t.Errorf("canonicalHost(%q, %q): got %q, want %q", tt.scheme, tt.host, got, tt.want)
			}
		})
	}
}

// portColon finds the port where url.URL.Port finds it: after the last
// colon, if only digits ('0' to '9', both included) follow, even if the
// colon is the host's first character.
func TestPortColonAgreesWithURLPort(t *testing.T) {
	for _, host := range []string{
		"", ":", ":80", ":0", "::", "example.com", "example.com:",
		"example.com:0", "example.com:9", "example.com:09", "example.com:65536",
		"example.com:/", "example.com::", "example.com:8a", "example.com:a8",
		"[::1]", "[::1]:9", "[::9]", "[fe80::1%25en0]:0", "[::1]:",
	} {
		want := (&url.URL{Host: host}).Port()
		got := ""
		if i := portColon(host); i >= 0 {
			got = host[i+1:]
		}
		if got != want {
			t.Errorf("port of %q: got %q, want %q", host, got, want)
		}
	}
}
