package proxy_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// An upstream of one backend, with retries as yaml's %s says.
const retryYAML = `
admission: {limit: "off"}
routes: [{upstream: a}]
upstreams:
  a:
    backends: [%s]
    limit: "off"
    retry: %s
`

// recorder is a backend that answers 503 and records each request's
// method and body.
type recorder struct {
	*counted
	mu   sync.Mutex
	seen []string
}

func newRecorder(t *testing.T, h http.HandlerFunc) *recorder {
	r := &recorder{}
	r.counted = newCounted(t, func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.seen = append(r.seen, req.Method+" "+string(b))
		r.mu.Unlock()
		h(w, req)
	})
	return r
}

func (r *recorder) requests() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := strings.Join(r.seen, ", ")
	r.seen = nil
	return s
}

// Retries by method: by default an idempotent request (GET, a PUT with
// its body) is sent again after a 503 and a POST is not; with methods:
// all, a POST is too, its body each time. A body longer than the 64 KiB
// the proxy keeps to send again is sent once. The client gets the
// backend's last answer.
func TestRetryMethods(t *testing.T) {
	big := strings.Repeat("x", 64<<10+1)
	for _, tt := range []struct {
		retry, method, body, want string
	}{
		{"{attempts: 3}", "GET", "", "GET , GET , GET "},
		{"{attempts: 3}", "PUT", "payload", "PUT payload, PUT payload, PUT payload"},
		{"{attempts: 3}", "POST", "payload", "POST payload"},
		{"{attempts: 3, methods: all}", "POST", "payload", "POST payload, POST payload, POST payload"},
		{"{attempts: 1}", "GET", "", "GET "},
		{"{attempts: 3}", "PUT", big, "PUT " + big},
	} {
		t.Run(fmt.Sprintf("%s %s %d", tt.retry, tt.method, len(tt.body)), func(t *testing.T) {
			b := newRecorder(t, status(503))
			p := start(t, retryYAML, b.URL, tt.retry)
			a := send(t, newClient(t), tt.method, p.URL+"/", tt.body)
			if a.err != nil || a.code != 503 || a.body != "503\n" {
				t.Errorf("got %d %q, %v; want the backend's 503", a.code, a.body, a.err)
			}
			if got := b.requests(); got != tt.want {
				t.Errorf("the backend got %q, want %q", got, tt.want)
			}
		})
	}
}

// Retries by status: the configured list replaces 502, 503 and 504.
func TestRetryStatuses(t *testing.T) {
	for _, tt := range []struct {
		code int
		want int64
	}{{500, 2}, {503, 1}, {502, 1}, {429, 2}} {
		b := newCounted(t, status(tt.code))
		p := start(t, retryYAML, b.URL, "{attempts: 2, statuses: [500, 429]}")
		if a := send(t, newClient(t), "GET", p.URL+"/", ""); a.code != tt.code {
			t.Errorf("%d: got %d, %v", tt.code, a.code, a.err)
		}
		if b.hits() != tt.want {
			t.Errorf("%d: the backend got %d requests, want %d", tt.code, b.hits(), tt.want)
		}
	}
}

// A 503 with Retry-After: 1 is retried no sooner than a second later.
func TestRetryAfterRead(t *testing.T) {
	var mu sync.Mutex
	var times []time.Time
	b := newCounted(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		times = append(times, time.Now())
		first := len(times) == 1
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	})
	p := start(t, retryYAML, b.URL, "{attempts: 2}")
	if a := send(t, newClient(t), "GET", p.URL+"/", ""); a.code != 200 || a.body != "ok" {
		t.Fatalf("got %d %q, %v; want 200 ok", a.code, a.body, a.err)
	}
	if gap := times[1].Sub(times[0]); gap < time.Second {
		t.Errorf("the retry came %v after the 503, want at least the 1s of its Retry-After", gap)
	}
}

// The budget bounds the retries: 300 requests to a backend that always
// answers 503, 3 attempts each, make 900 attempts without it; with 20% of
// the requests and the reserve of 10 a second over 10 seconds, the
// retries are exactly 100 + 300*20% = 160, all within one budget period.
func TestRetryBudget(t *testing.T) {
	b := newCounted(t, status(503))
	p := start(t, retryYAML, b.URL, "{attempts: 3, budget: 20%}")
	c := newClient(t)
	began := time.Now()
	for range 300 {
		if a := send(t, c, "GET", p.URL+"/", ""); a.code != 503 {
			t.Fatalf("got %d, %v; want 503", a.code, a.err)
		}
	}
	if took := time.Since(began); took > 9*time.Second {
		t.Skipf("300 requests took %v: past the budget's period, the count is not exact", took)
	}
	if got := b.hits(); got != 460 {
		t.Errorf("the backend got %d requests, want 300 and 160 retries", got)
	}
}

// A retry happens before anything of the response went to the client, by
// construction: the reverse proxy writes the response only once the round
// trip, and its retries, have returned it. A backend that fails once it
// has sent the header and part of the body is not asked again: the client
// gets the part (a body of unknown length, which the proxy flushes as it
// comes) and a broken body, and the upstream drains (a request whose
// response was aborted leaves it).
func TestNoRetryAfterFirstByte(t *testing.T) {
	b := newCounted(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		io.WriteString(w, "part")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	})
	p := start(t, retryYAML, b.URL, "{attempts: 3}")
	a := send(t, newClient(t), "GET", p.URL+"/", "")
	if a.code != 200 || a.body != "part" || a.err == nil {
		t.Errorf("got %d %q, %v; want 200, the part, and an error reading the rest", a.code, a.body, a.err)
	}
	if b.hits() != 1 {
		t.Errorf("the backend got %d requests, want 1", b.hits())
	}
}

// Timeouts: a try that takes longer than timeout.try is given up and
// retried; a request whose tries take longer than timeout.overall is
// answered 504 at that deadline.
func TestTimeouts(t *testing.T) {
	hang := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	t.Run("try", func(t *testing.T) {
		first := true
		var mu sync.Mutex
		b := newCounted(t, func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			f := first
			first = false
			mu.Unlock()
			if f {
				hang(w, r)
				return
			}
			io.WriteString(w, "ok")
		})
		p := start(t, retryYAML+"    timeout: {try: 200ms, overall: 5s}\n", b.URL, "{attempts: 2}")
		began := time.Now()
		a := send(t, newClient(t), "GET", p.URL+"/", "")
		if took := time.Since(began); a.code != 200 || took < 200*time.Millisecond {
			t.Errorf("got %d %q, %v after %v; want 200 after the try's 200ms", a.code, a.body, a.err, took)
		}
		if b.hits() != 2 {
			t.Errorf("the backend got %d requests, want 2", b.hits())
		}
	})
	t.Run("overall", func(t *testing.T) {
		b := newCounted(t, hang)
		p := start(t, retryYAML+"    timeout: {try: 300ms, overall: 500ms}\n", b.URL, "{attempts: 3}")
		began := time.Now()
		a := send(t, newClient(t), "GET", p.URL+"/", "")
		if took := time.Since(began); a.code != 504 || took < 500*time.Millisecond {
			t.Errorf("got %d %q, %v after %v; want 504 after the overall 500ms", a.code, a.body, a.err, took)
		}
		eventually(t, "the backend got 2 requests", func() bool { return b.hits() == 2 })
	})
}

// A retry goes to a backend the request has not tried: with one backend
// refusing connections (a killed process) and one answering, every GET is
// answered 200, each first sent to the dead one or straight to the live
// one, until the dead one is ejected.
func TestRetryGoesToAnotherBackend(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	live := newCounted(t, status(200))
	p := start(t, retryYAML, dead+", "+live.URL, "{attempts: 2}")
	c := newClient(t)
	for i := range 50 {
		if a := send(t, c, "GET", p.URL+"/", ""); a.code != 200 {
			t.Fatalf("request %d: got %d, %v; want 200", i, a.code, a.err)
		}
	}
	if live.hits() != 50 {
		t.Errorf("the live backend got %d requests, want 50", live.hits())
	}
}
