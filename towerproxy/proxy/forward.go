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
// Each request sent upstream gets new values for the four headers: their
// four slices in one allocation, and the Forwarded element's string; the
// client's address is a part of RemoteAddr, and a trusted peer's lists
// joined with this hop cost a string each.

// The values of X-Forwarded-Proto, shared by all requests: nothing
// after Rewrite changes a header's values in place.
var (
	protoHTTP  = []string{"http"}
	protoHTTPS = []string{"https"}
)

// setForwarded sets the forwarding headers of pr.Out, believing those of
// pr.In if trusted says its peer is trusted.
func setForwarded(pr *httputil.ProxyRequest, trusted func(netip.Addr) bool) {
	in, out := pr.In, pr.Out
	peer, node, ok := peerAddr(in)
	believe := ok && trusted != nil && trusted(peer)
	tls := in.TLS != nil
	proto := protoHTTP
	if tls {
		proto = protoHTTPS
	}
	vals := make([]string, 3)
	xff, host := vals[0:1:1], vals[1:2:2]
	xff[0], host[0] = node, in.Host
	elem := vals[2:3:3]
	elem[0] = forwardedElement(node, ok && peer.Is6(), in.Host, tls)
	if believe {
		if prior := in.Header["X-Forwarded-For"]; len(prior) > 0 {
			xff[0] = strings.Join(prior, ", ") + ", " + node
		}
		if v := in.Header["X-Forwarded-Host"]; len(v) > 0 && v[0] != "" {
			host[0] = v[0]
		}
		switch v := in.Header.Get("X-Forwarded-Proto"); v {
		case "http":
			proto = protoHTTP
		case "https":
			proto = protoHTTPS
		}
		// Forwarded: this hop's element says what this proxy saw, even
		// when X-Forwarded-Host and -Proto repeat a trusted peer's: each
		// element of Forwarded is one hop's.
		if prior := in.Header["Forwarded"]; len(prior) > 0 {
			elem[0] = strings.Join(prior, ", ") + ", " + elem[0]
		}
	}
	out.Header["X-Forwarded-For"] = xff
	out.Header["X-Forwarded-Host"] = host
	out.Header["X-Forwarded-Proto"] = proto
	out.Header["Forwarded"] = elem
}

// forwardedElement is one element of a Forwarded header (RFC 7239,
// section 4): for= the node (an IPv6 one bracketed and so quoted, section
// 6), host= and proto= of the hop from the peer.
func forwardedElement(node string, ipv6 bool, host string, tls bool) string {
	var b strings.Builder
	b.Grow(len(node) + len(host) + 32)
	b.WriteString("for=")
	if ipv6 {
		b.WriteString(`"[`)
		b.WriteString(node)
		b.WriteString(`]"`)
	} else {
		b.WriteString(node)
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
// mapped into IPv6 as IPv4, the same as a string, and whether
// r.RemoteAddr had one. The string is a part of RemoteAddr, without an
// allocation, unless the address was mapped.
func peerAddr(r *http.Request) (netip.Addr, string, bool) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, "unknown", false
	}
	a := ap.Addr()
	if a.Is4In6() {
		a = a.Unmap()
		return a, a.String(), true
	}
	host := r.RemoteAddr[:strings.LastIndexByte(r.RemoteAddr, ':')]
	return a, strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), true
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
