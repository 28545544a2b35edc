package proxy_test

import (
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// Hedging at the 90th percentile: once a period has seen enough answers
// (all quick), a GET that the backend holds for 2s is sent again after
// about that percentile, to whichever backend the balancer picks, and the
// copy's quick answer is the client's. A POST is never hedged: it waits
// for its slow answer.
func TestHedge(t *testing.T) {
	var slowNext atomic.Bool // the next request, to whichever backend, is slow
	h := func(w http.ResponseWriter, r *http.Request) {
		if slowNext.CompareAndSwap(true, false) {
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
				return
			}
		}
		io.WriteString(w, "ok")
	}
	a, b := newCounted(t, h), newCounted(t, h)
	p := start(t, `
admission: {limit: "off"}
routes: [{upstream: u}]
upstreams:
  u:
    backends: [%s, %s]
    limit: "off"
    retry: {attempts: 1}
    hedge: {percentile: 90, min_requests: 20, period: 300ms}
`, a.URL, b.URL)
	c := newClient(t)
	warm := func() {
		for end := time.Now().Add(700 * time.Millisecond); time.Now().Before(end); {
			if r := send(t, c, "GET", p.URL+"/", ""); r.code != 200 {
				t.Fatalf("got %d, %v", r.code, r.err)
			}
		}
	}
	total := func() int64 { return a.hits() + b.hits() }

	warm()
	before := total()
	slowNext.Store(true)
	began := time.Now()
	r := send(t, c, "GET", p.URL+"/", "")
	if took := time.Since(began); r.code != 200 || took > time.Second {
		t.Errorf("hedged GET: got %d %q, %v after %v; want 200 well before the 2s", r.code, r.body, r.err, took)
	}
	if got := total() - before; got != 2 {
		t.Errorf("hedged GET: the backends got %d requests, want the original and its hedge", got)
	}

	warm()
	before = total()
	slowNext.Store(true)
	began = time.Now()
	r = send(t, c, "POST", p.URL+"/", "payload")
	if took := time.Since(began); r.code != 200 || took < 2*time.Second {
		t.Errorf("POST: got %d, %v after %v; want 200 after the 2s", r.code, r.err, took)
	}
	if got := total() - before; got != 1 {
		t.Errorf("POST: the backends got %d requests, want 1", got)
	}
}
