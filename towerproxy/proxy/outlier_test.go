package proxy_test

import (
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// flaky answers 503 half the time, as a seeded generator says, and counts
// the 503s it sent.
type flaky struct {
	*counted
	mu     sync.Mutex
	rand   *rand.Rand
	failed int
}

func newFlaky(t *testing.T, name string) *flaky {
	f := &flaky{rand: rand.New(rand.NewPCG(26, 1))}
	f.counted = newCounted(t, func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		fail := f.rand.IntN(2) == 0
		if fail {
			f.failed++
		}
		f.mu.Unlock()
		if fail {
			http.Error(w, "unlucky", http.StatusServiceUnavailable)
			return
		}
		named(name)(w, r)
	})
	return f
}

// The failing backend, through the proxy: one backend of four
// answers 503 half the time. Outlier detection ejects it at its 5th
// failure in a row, for 30s, longer than the test. A client request fails
// only if each of its attempts got a 503 from it: so the failures are at
// most its 503s before the ejection over the attempts, and once it is out
// none fails. That is the 99.99% over any run where the
// ejection's few failures are fewer than a ten-thousandth of the
// requests: the bench's minutes at thousands a second. (Before the
// ejection, a retry may go back to the backend that failed: the balancer
// picks without knowing which one the first attempt went to, and its
// quick 503s make it look the least loaded.)
func TestOutlierEjectsFailingBackend(t *testing.T) {
	bad := newFlaky(t, "bad")
	var good []string
	for _, name := range []string{"a", "b", "c"} {
		good = append(good, newCounted(t, named(name)).URL)
	}
	p := start(t, `
admission: {limit: "off"}
routes: [{upstream: u}]
upstreams:
  u:
    backends: [%s, %s]
    limit: "off"
    retry: {attempts: 2}
`, bad.URL, strings.Join(good, ", "))
	c := newClient(t)
	const n = 4000
	failed, ejectedAt := 0, -1
	var ejected time.Time
	for i := range n {
		if a := send(t, c, "GET", p.URL+"/", ""); a.code != 200 {
			failed++
			if ejectedAt >= 0 && time.Since(ejected) < 25*time.Second { // within its 30s out
				t.Errorf("request %d failed with %d, after the ejection at %d", i, a.code, ejectedAt)
			}
		}
		if ejectedAt < 0 && p.logs.count("proxy: backend ejected") > 0 {
			ejectedAt, ejected = i, time.Now()
		}
	}
	if ejectedAt < 0 {
		t.Errorf("the failing backend was not ejected in %d requests", n)
	}
	if bound := bad.failed / 2; failed > bound {
		t.Errorf("%d requests failed, more than the %d 503s of the backend over 2 attempts", failed, bad.failed)
	}
	if got := p.logs.count("proxy: backend ejected", "backend="+bad.URL); got != 1 {
		t.Errorf("got %d ejections of the failing backend, want 1", got)
	}
	t.Logf("ejected at request %d after %d 503s; %d of %d requests failed: %.3f%% success",
		ejectedAt, bad.failed, failed, n, 100*float64(n-failed)/n)
}

// At most the share of backends is ejected: with three of four failing
// every request and a max share of 50%, two are ejected, and the third
// stays in and keeps getting requests, rather than the proxy sending
// everything to the one left.
func TestOutlierMaxShare(t *testing.T) {
	var failing []*counted
	var urls []string
	for range 3 {
		f := newCounted(t, status(503))
		failing = append(failing, f)
		urls = append(urls, f.URL)
	}
	ok := newCounted(t, named("ok"))
	p := start(t, `
admission: {limit: "off"}
routes: [{upstream: u}]
upstreams:
  u:
    backends: [%s, %s]
    limit: "off"
    retry: {attempts: 1}
    outlier: {max_share: 50%%}
`, strings.Join(urls, ", "), ok.URL)
	c := newClient(t)
	for range 300 {
		send(t, c, "GET", p.URL+"/", "")
	}
	if got := p.logs.count("proxy: backend ejected"); got != 2 {
		t.Fatalf("got %d ejections, want 2", got)
	}
	var in *counted
	for _, f := range failing {
		if p.logs.count("proxy: backend ejected", "backend="+f.URL) == 0 {
			in = f
		}
	}
	before := in.hits()
	var wg sync.WaitGroup
	for range 8 { // at once, so that the loads spread them
		wg.Go(func() {
			for range 20 {
				send(t, c, "GET", p.URL+"/", "")
			}
		})
	}
	wg.Wait()
	if in.hits() == before {
		t.Error("the failing backend left in got no request, want some")
	}
	if got := p.logs.count("proxy: backend ejected"); got != 2 {
		t.Errorf("got %d ejections in all, want still 2", got)
	}
}
