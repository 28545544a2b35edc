package proxy

import (
	"context"
	"net/http"
	"strings"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towerhttp"
)

// A route's rate limit is a per-key limit over a stand-in that is always
// ready and does nothing: the route asks it for each request before the
// admission (see route.serve), rather than wrap the admission in it, so
// that the limit, and the state of its keys, is kept by a reload that
// keeps the route's limit, whatever else changes.

// limitKey names a route's rate limit across reloads: the same route (its
// host and path) with the same limit keeps its keys' buckets.
type limitKey struct {
	host, path string
	limit      RateLimit
}

// admitted is the stand-in under a rate limit.
var admitted = tower.ServiceFunc[*http.Request, towerhttp.Response](func(context.Context, *http.Request) (towerhttp.Response, error) {
	return towerhttp.Response{}, nil
})

// localLimit returns rl as this proxy's own limit: a token bucket per key,
// in memory. A request over its key's rate is refused with a
// *limit.KeyLimitError, answered 429 with Retry-After.
func localLimit(rl *RateLimit) tower.Service[*http.Request, towerhttp.Response] {
	return limit.NewKeyed(admitted, keyOf(rl.Key), rl.Rate.N, rl.Rate.Per, rl.Burst)
}

// keyOf returns the function that draws a request's key: its client's
// address, or a header's value. A request without the header is keyed by
// its client's address, so that leaving the header out is no way around
// the limit.
func keyOf(key string) func(*http.Request) string {
	if name, ok := strings.CutPrefix(key, "header:"); ok {
		name = http.CanonicalHeaderKey(name)
		return func(r *http.Request) string {
			if v := r.Header[name]; len(v) > 0 && v[0] != "" {
				return v[0]
			}
			return clientAddr(r)
		}
	}
	return clientAddr
}

// clientAddr is the address of the peer that sent r, without its port:
// RemoteAddr cut, with no allocation.
func clientAddr(r *http.Request) string {
	a := r.RemoteAddr
	i := strings.LastIndexByte(a, ':')
	if i < 0 {
		return a
	}
	a = a[:i]
	if len(a) > 1 && a[0] == '[' && a[len(a)-1] == ']' {
		a = a[1 : len(a)-1]
	}
	return a
}
