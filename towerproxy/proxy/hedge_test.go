package proxy_test

import (
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

// Hedging at the 90th percentile: once a period has seen enough answers
// (all quick), a GET that the backend holds for 2s is sent again after
// about that percentile, to whichever backend the balancer picks, and the
// copy's quick answer is the client's. A POST is never hedged: it waits
// for its slow answer.
func TestHedge(t *testing.T) {
	// The first request with an X-Tag, to whichever backend, is slow; a
	// copy of it, with the same tag, is not. Warm-up's requests, and their
	// hedges, have no tag.
	var seen sync.Map
	var mu sync.Mutex
	tagged := map[string]int{} // requests by tag
	h := func(w http.ResponseWriter, r *http.Request) {
		tag := r.Header.Get("X-Tag")
		mu.Lock()
		tagged[tag]++
		mu.Unlock()
		if _, copied := seen.LoadOrStore(tag, true); tag != "" && !copied {
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

	warm()
	began := time.Now()
	r := send(t, c, "GET", p.URL+"/", "", "X-Tag", "get")
	if took := time.Since(began); r.code != 200 || took > time.Second {
		t.Errorf("hedged GET: got %d %q, %v after %v; want 200 well before the 2s", r.code, r.body, r.err, took)
	}
	count := func(tag string) int {
		mu.Lock()
		defer mu.Unlock()
		return tagged[tag]
	}
	if got := count("get"); got != 2 {
		t.Errorf("hedged GET: the backends got %d requests, want the original and its hedge", got)
	}

	warm()
	began = time.Now()
	r = send(t, c, "POST", p.URL+"/", "payload", "X-Tag", "post")
	if took := time.Since(began); r.code != 200 || took < 2*time.Second {
		t.Errorf("POST: got %d, %v after %v; want 200 after the 2s", r.code, r.err, took)
	}
	if got := count("post"); got != 1 {
		t.Errorf("POST: the backends got %d requests, want 1", got)
	}
}
