package proxy

import (
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strings"
)

// The forwarding headers tell a backend who its client is, which host it
// asked for and over which protocol, since the backend itself sees only
// the proxy. A client may send them too, to lie about its address: so
// the proxy believes the ones a request carries only if its peer is one
// of the Config's TrustedProxies (another proxy or a load balancer in
// front), and appends to them; from any other peer it replaces them with
// what it sees itself.
//
//   - X-Forwarded-For: the addresses the request came through, the
//     client's first: the trusted peer's list and then the peer, or the
//     peer alone.
//   - X-Forwarded-Host: the Host the client asked for: the trusted
//     peer's value, or the request's Host.
//   - X-Forwarded-Proto: "http" or "https", how the client reached the
//     first proxy: the trusted peer's value, or how it reached this one.
//   - Forwarded (RFC 7239): the same as one element, for=;host=;proto=,
//     after the trusted peer's elements, or alone.
//
// Each request sent upstream gets new values for the four headers: one
// string for X-Forwarded-For, one for Forwarded, and the slices of the
// header map, about five allocations.

// setForwarded sets the forwarding headers of pr.Out, believing those of
// pr.In if trusted says its peer is trusted.
func setForwarded(pr *httputil.ProxyRequest, trusted func(netip.Addr) bool) {
	in, out := pr.In, pr.Out
	peer, ok := peerAddr(in)
	believe := ok && trusted != nil && trusted(peer)
	node := "unknown"
	if ok {
		node = peer.String()
	}
	proto := "http"
	if in.TLS != nil {
		proto = "https"
	}
	host := in.Host

	xff := node
	if believe {
		if prior := in.Header["X-Forwarded-For"]; len(prior) > 0 {
			xff = strings.Join(prior, ", ") + ", " + node
		}
		if v := in.Header.Get("X-Forwarded-Host"); v != "" {
			host = v
		}
		if v := in.Header.Get("X-Forwarded-Proto"); v == "http" || v == "https" {
			proto = v
		}
	}
	out.Header["X-Forwarded-For"] = []string{xff}
	out.Header["X-Forwarded-Host"] = []string{host}
	out.Header["X-Forwarded-Proto"] = []string{proto}

	// Forwarded: this hop's element says what this proxy saw, even when
	// X-Forwarded-Host and -Proto repeat a trusted peer's: each element
	// of Forwarded is one hop's.
	elem := forwardedElement(peer, ok, in.Host, in.TLS != nil)
	if prior := in.Header["Forwarded"]; believe && len(prior) > 0 {
		elem = strings.Join(prior, ", ") + ", " + elem
	}
	out.Header["Forwarded"] = []string{elem}
}

// forwardedElement is one element of a Forwarded header (RFC 7239,
// section 4): for=, host= and proto= of the hop from the peer.
func forwardedElement(peer netip.Addr, known bool, host string, tls bool) string {
	var b strings.Builder
	b.Grow(len(host) + 64)
	b.WriteString("for=")
	switch {
	case !known:
		b.WriteString("unknown")
	case peer.Is6():
		// An IPv6 node is bracketed, and so must be quoted (section 6).
		b.WriteString(`"[`)
		b.WriteString(peer.String())
		b.WriteString(`]"`)
	default:
		b.WriteString(peer.String())
	}
	if host != "" {
		b.WriteString(";host=")
		writeValue(&b, host)
	}
	if tls {
		b.WriteString(";proto=https")
	} else {
		b.WriteString(";proto=http")
	}
	return b.String()
}

// writeValue writes v as a Forwarded value: a token as it is, anything
// else (a host with a port: ':' is not a token character) as a quoted
// string, with '"' and '\' escaped.
func writeValue(b *strings.Builder, v string) {
	if isToken(v) {
		b.WriteString(v)
		return
	}
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		if c := v[i]; c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	b.WriteByte('"')
}

// isToken reports whether v is an RFC 9110 token: one or more tchars.
func isToken(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

// peerAddr returns the address of the peer that sent r, an IPv4 address
// mapped into IPv6 as IPv4, and whether r.RemoteAddr had one.
func peerAddr(r *http.Request) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

// trusts reports whether a is within one of the prefixes.
func trusts(prefixes []Prefix, a netip.Addr) bool {
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
