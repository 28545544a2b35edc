package proxy_test

import (
	"sync"
	"testing"
	"time"
)

// A breaker per backend, with the passive check off so that the breaker
// alone acts: the backend failing every request gets 3, then none for the
// breaker's minute, while the other serves the rest; the requests that
// failed are those 3 (each tried once), and a few more whose permits were
// granted before the breaker opened, one per client at most.
func TestBreakerPerBackend(t *testing.T) {
	bad, good := newCounted(t, status(500)), newCounted(t, named("good"))
	p := start(t, `
admission: {limit: "off"}
routes: [{upstream: u}]
upstreams:
  u:
    backends: [%s, %s]
    limit: "off"
    retry: {attempts: 1}
    outlier: {off: true}
    breaker: {failures: 3, delay: 1m}
`, bad.URL, good.URL)
	c := newClient(t)
	var mu sync.Mutex
	failed := 0
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				if a := send(t, c, "GET", p.URL+"/", ""); a.code != 200 {
					mu.Lock()
					failed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if got := bad.hits(); got < 3 || got > 3+4 {
		t.Errorf("the failing backend got %d requests, want 3 and at most one per client after", got)
	}
	if int64(failed) != bad.hits() || good.hits() != 200-bad.hits() {
		t.Errorf("%d requests failed and the good backend served %d, want the failing backend's %d and the rest", failed, good.hits(), bad.hits())
	}
}

// With every backend's breaker open, a request is answered 503 with
// Retry-After at once, rather than waiting for a breaker to let a probe
// through. The request after the 3rd failure still reaches the backend:
// the balancer holds a permit of each ready backend, and the breaker
// granted that one before it opened (package breaker lets such a permit
// through, and drops its result).
func TestBreakersAllOpen(t *testing.T) {
	bad := newCounted(t, status(500))
	p := start(t, `
admission: {limit: "off"}
routes: [{upstream: u}]
upstreams:
  u:
    backends: [%s]
    limit: "off"
    retry: {attempts: 1}
    breaker: {failures: 3, delay: 1m}
`, bad.URL)
	c := newClient(t)
	for range 4 {
		if a := send(t, c, "GET", p.URL+"/", ""); a.code != 500 {
			t.Fatalf("got %d, %v; want the backend's 500", a.code, a.err)
		}
	}
	began := time.Now()
	a := send(t, c, "GET", p.URL+"/", "")
	if took := time.Since(began); a.code != 503 || a.retryAfter != "1" || took > time.Second {
		t.Errorf("got %d, Retry-After %q, after %v; want 503 with Retry-After: 1 at once", a.code, a.retryAfter, took)
	}
	if bad.hits() != 4 {
		t.Errorf("the backend got %d requests, want 4", bad.hits())
	}
}
