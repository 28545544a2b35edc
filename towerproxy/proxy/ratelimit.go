package proxy

import (
	"net/http"
	"net/netip"
	"strings"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towerhttp"
)

// rateLimited returns svc behind a limit per key, as rl says: a token
// bucket per client address or header value. A request over its key's
// rate is refused with a limit.KeyLimitError, which the handler answers
// 429 with Retry-After.
func rateLimited(rl *RateLimit, svc tower.Service[*http.Request, towerhttp.Response]) tower.Service[*http.Request, towerhttp.Response] {
	return limit.NewKeyed(svc, keyOf(rl.Key), rl.Rate.N, rl.Rate.Per, rl.Burst)
}

// keyOf returns the function that draws a request's key: its client's
// address, or a header's value.
func keyOf(key string) func(*http.Request) string {
	if name, ok := strings.CutPrefix(key, "header:"); ok {
		name = http.CanonicalHeaderKey(name)
		return func(r *http.Request) string { return r.Header.Get(name) }
	}
	return clientAddr
}

// clientAddr is the address of the peer that sent r.
func clientAddr(r *http.Request) string {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().String()
	}
	return r.RemoteAddr
}
