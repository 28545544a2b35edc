package proxy

import (
	"net/http"
	"strings"
)

// A request that asks to switch protocols (an HTTP/1.1 Upgrade: a
// WebSocket handshake) becomes a tunnel between the client and a backend
// once the backend answers 101 Switching Protocols: httputil.ReverseProxy
// hijacks the client's connection and copies bytes both ways until either
// side closes. Its route and its upstream's balancer pick the backend as
// for any request; the backend's Upgrade must be the one asked for.
//
// An upstream whose protocol is h2c cannot take one: HTTP/2 has no
// Upgrade (RFC 9113, section 8.6), and the request is answered 501.
//
// A handshake counts in its route's rate limit, as any request does. A
// tunnel does not go through the adaptive limits, the proxy's nor its
// upstream's: it lasts as long as the conversation in it, minutes or
// days, which is no latency of the backend's, and would hold a permit for
// as long. Counted, a few hundred idle WebSockets would fill the limits,
// and their lifetimes, taken for latencies, would make them shrink: every
// other request would be shed. (The backend's load estimate counts the
// handshake alone, for the same reason: see towerhttp.BodyCompletion.)
// A reload lets a tunnel finish on the upstream it started on; a drain
// waits for tunnels no longer than the drain timeout, since net/http's
// Shutdown does not track the connections it handed over.

// upgrading reports whether r asks to switch protocols: an HTTP/1.1
// request with an Upgrade header and "upgrade" among the tokens of its
// Connection header. HTTP/2 has no Upgrade (RFC 9113, section 8.6), and
// an HTTP/1.0 request's is ignored (RFC 9110, section 7.8). An Upgrade
// to h2c is not one the proxy makes (see h2cUpgrade).
func upgrading(r *http.Request) bool {
	if ignoresUpgrade(r) || len(r.Header["Upgrade"]) == 0 || h2cUpgrade(r.Header) {
		return false
	}
	return hasToken(r.Header["Connection"], "upgrade")
}

// ignoresUpgrade reports whether r's Upgrade, if it has one, must be
// ignored, rather than passed on: r is not HTTP/1.1.
func ignoresUpgrade(r *http.Request) bool {
	return r.ProtoMajor != 1 || r.ProtoMinor == 0
}

// h2cUpgrade reports whether h asks to upgrade to h2c. The proxy does not
// pass such a request's Upgrade on (the rewrite removes it): a backend
// that took it would speak HTTP/2 with the client over a tunnel, every
// later request on it out of the proxy's sight, its routes and limits
// (h2c smuggling). The request goes on as an ordinary one.
func h2cUpgrade(h http.Header) bool {
	return hasToken(h["Upgrade"], "h2c")
}

// hasToken reports whether one of the comma-separated lists vs has tok,
// in any case.
func hasToken(vs []string, tok string) bool {
	for _, v := range vs {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), tok) {
				return true
			}
		}
	}
	return false
}

// tunnel serves r, which asks to switch protocols, with its route's
// reverse proxy, within its route's rate limit and outside the
// concurrency limits.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	for {
		s := p.state.Load()
		rt := s.match(r)
		if rt == nil {
			notFound(w, r)
			return
		}
		if rt.upstream.cfg.Protocol == "h2c" {
			// HTTP/2 has no Upgrade: the transport would fail the
			// request, and the outlier detection blame the backend.
			http.Error(w, "this upstream speaks HTTP/2, which cannot switch protocols", http.StatusNotImplemented)
			return
		}
		if !rt.upstream.drain.enter() {
			if p.state.Load() == s { // retired by Close
				w.Header().Set("Retry-After", "1")
				http.Error(w, "the proxy is closed", http.StatusServiceUnavailable)
				return
			}
			continue // retired by a reload: the state in force is newer
		}
		defer rt.upstream.drain.leave()
		if rt.admit(w, r) {
			rt.upstream.rp.ServeHTTP(w, r)
		}
		return
	}
}
