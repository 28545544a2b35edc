package proxy_test

import (
	"net/http"
	"sync"
	"testing"
	"time"
)

// holding is a backend that holds every request until released, and says
// when one has arrived.
type holding struct {
	*counted
	arrived chan struct{}
	release chan struct{}
}

func newHolding(t *testing.T) *holding {
	h := &holding{arrived: make(chan struct{}, 1000), release: make(chan struct{})}
	h.counted = newCounted(t, func(w http.ResponseWriter, r *http.Request) {
		h.arrived <- struct{}{}
		select {
		case <-h.release:
		case <-r.Context().Done():
		}
	})
	return h
}

// overload sends requests of the low priority, each held by the backend,
// until one is shed, then one of normal priority and one critical, which
// must both get in: a limit that keeps room for the higher priorities
// sheds the low ones first. low, normal and critical send a request of
// their priority. It releases every request held before it returns.
func overload(t *testing.T, h *holding, low, normal, critical func() answer) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(h.release)
	// in sends a request and reports whether it reached the backend; one
	// answered first was shed, with 503 and Retry-After.
	in := func(send func() answer) bool {
		done := make(chan answer, 1)
		wg.Go(func() { done <- send() })
		select {
		case <-h.arrived:
			return true
		case a := <-done:
			if a.code != 503 || a.retryAfter == "" {
				t.Errorf("a request not let in: got %d, Retry-After %q, %v; want 503 with Retry-After", a.code, a.retryAfter, a.err)
			}
			return false
		case <-time.After(waitFor):
			t.Fatal("a request neither reached the backend nor was answered")
			return false
		}
	}
	lows := 0
	for in(low) {
		if lows++; lows > 500 {
			t.Fatal("500 low requests all let in: none shed")
		}
	}
	if lows == 0 {
		t.Fatal("the first low request was shed, with nothing in flight")
	}
	if !in(normal) {
		t.Errorf("a normal request was shed after %d low ones were let in, and one shed", lows)
	}
	if !in(critical) {
		t.Errorf("a critical request was shed after %d low ones and a normal one were let in", lows)
	}
	t.Logf("%d low requests let in before one was shed; normal and critical let in after", lows)
}

// Priorities under overload, through the proxy, on loopback: the
// upstream's adaptive limit (its probe's limit, or the learnt one) sees
// the priority the header gives, and the proxy's own limit the one the
// route gives, both set on the request's context before either limit is
// asked. Each sheds the low requests first.
func TestPriorityShedsLowFirst(t *testing.T) {
	t.Run("upstream limit, priority header", func(t *testing.T) {
		h := newHolding(t)
		p := start(t, `
admission: {limit: "off", priority_header: X-Priority}
routes: [{upstream: u}]
upstreams:
  u: {backends: [%s]}
`, h.URL)
		c := newClient(t)
		with := func(prio string) func() answer {
			return func() answer { return send(t, c, "GET", p.URL+"/", "", "X-Priority", prio) }
		}
		overload(t, h, with("low"), with("normal"), with("critical"))
	})
	t.Run("proxy's limit, route priority", func(t *testing.T) {
		h := newHolding(t)
		p := start(t, `
routes:
  - {path: /low, upstream: u, priority: low}
  - {path: /critical, upstream: u, priority: critical}
  - {upstream: u}
upstreams:
  u: {backends: [%s], limit: "off"}
`, h.URL)
		c := newClient(t)
		to := func(path string) func() answer {
			return func() answer { return send(t, c, "GET", p.URL+path, "") }
		}
		overload(t, h, to("/low"), to("/"), to("/critical"))
	})
}
