package proxy_test

import (
	"testing"
	"time"

	"github.com/towergo/tower/towerredis/redistest"
)

// The fleet's rate limit, 1 a minute per key in bursts of 2, on a real
// redis-server: two proxies share each key's bucket, so the key's third
// request, whichever proxy gets it, is answered 429 with Retry-After: 60.
func TestFleetRateLimit(t *testing.T) {
	srv := redistest.Start(t)
	b := newCounted(t, named("b"))
	const yaml = `
redis: {addr: %q}
routes:
  - upstream: u
    rate_limit: {key: "header:X-Key", rate: 1/m, burst: 2, fleet: true}
upstreams:
  u: {backends: [%s]}
`
	p1, p2 := start(t, yaml, srv.Addr(), b.URL), start(t, yaml, srv.Addr(), b.URL)
	c := newClient(t)
	for i, tt := range []struct {
		p          *started
		key        string
		code       int
		retryAfter string
	}{
		{p1, "A", 200, ""},
		{p2, "A", 200, ""},
		{p1, "A", 429, "60"},
		{p2, "A", 429, "60"},
		{p2, "B", 200, ""},
	} {
		a := send(t, c, "GET", tt.p.URL+"/", "", "X-Key", tt.key)
		if a.code != tt.code || a.retryAfter != tt.retryAfter {
			t.Errorf("request %d, key %s: got %d, Retry-After %q, %v; want %d, Retry-After %q", i, tt.key, a.code, a.retryAfter, a.err, tt.code, tt.retryAfter)
		}
	}
	if b.hits() != 3 {
		t.Errorf("the backend got %d requests, want the 3 let through", b.hits())
	}
}

// Without Redis, a fleet limit admits every request (fail: open, the
// default), or refuses each with 503 and Retry-After (fail: closed),
// within the limit's round trip's 50ms and its retry.
func TestFleetRateLimitRedisDown(t *testing.T) {
	for _, tt := range []struct {
		fail       string
		code       int
		retryAfter string
	}{{"open", 200, ""}, {"closed", 503, "1"}} {
		t.Run(tt.fail, func(t *testing.T) {
			srv := redistest.Start(t)
			b := newCounted(t, named("b"))
			p := start(t, `
redis: {addr: %q, fail: %s}
routes:
  - upstream: u
    rate_limit: {rate: 1/m, burst: 1, fleet: true}
upstreams:
  u: {backends: [%s]}
`, srv.Addr(), tt.fail, b.URL)
			c := newClient(t)
			if a := send(t, c, "GET", p.URL+"/", ""); a.code != 200 {
				t.Fatalf("with Redis: got %d, %v; want 200", a.code, a.err)
			}
			srv.Stop()
			for i := range 3 {
				began := time.Now()
				a := send(t, c, "GET", p.URL+"/", "")
				if took := time.Since(began); a.code != tt.code || a.retryAfter != tt.retryAfter || took > 2*time.Second {
					t.Errorf("request %d without Redis: got %d, Retry-After %q, %v, after %v; want %d, Retry-After %q, at once", i, a.code, a.retryAfter, a.err, took, tt.code, tt.retryAfter)
				}
			}
		})
	}
}
