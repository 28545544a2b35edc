package proxy_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/towergo/tower/towerproxy/proxy"
)

// waitFor bounds every wait of these tests: a request, a condition
// polled for. A machine busy with other work still answers a request on
// loopback well within it.
const waitFor = 10 * time.Second

// newClient returns a client whose requests give up after waitFor.
func newClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: waitFor}
}

// answer is a request's answer as the client saw it.
type answer struct {
	code       int
	body       string
	retryAfter string
	err        error
}

// send sends a request with method and body ("" for none) and returns the
// answer, its body read whole.
func send(t *testing.T, c *http.Client, method, url, body string, header ...string) answer {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return answer{code: res.StatusCode, body: string(b), retryAfter: res.Header.Get("Retry-After"), err: err}
}

// counted is a backend on loopback that counts its requests and answers
// each with h.
type counted struct {
	*httptest.Server
	n atomic.Int64
}

func newCounted(t *testing.T, h http.HandlerFunc) *counted {
	t.Helper()
	c := &counted{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.n.Add(1)
		h(w, r)
	}))
	t.Cleanup(c.Close)
	return c
}

// hits is the number of requests the backend got.
func (c *counted) hits() int64 { return c.n.Load() }

// named answers 200 with name.
func named(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) }
}

// status answers code, with body "code".
func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Error(w, fmt.Sprint(code), code) }
}

// logs records the messages the proxy logs, for the tests that look at
// its events (a backend ejected, down or up).
type logs struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logs) Enabled(context.Context, slog.Level) bool { return true }
func (l *logs) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logs) WithGroup(string) slog.Handler            { return l }

func (l *logs) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.msgs = append(l.msgs, b.String())
	l.mu.Unlock()
	return nil
}

// count returns the number of messages that start with msg and hold each
// of attrs ("key=value").
func (l *logs) count(msg string, attrs ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if strings.HasPrefix(m, msg) && all(m, attrs) {
			n++
		}
	}
	return n
}

func all(m string, attrs []string) bool {
	for _, a := range attrs {
		if !strings.Contains(m, " "+a+" ") && !strings.HasSuffix(m, " "+a) {
			return false
		}
	}
	return true
}

// started is a Proxy of a configuration, in front of a test server.
type started struct {
	*proxy.Proxy
	URL  string
	logs *logs
}

// start parses yaml, which names the backends as the format's verbs do
// with args, and runs its Proxy behind a test server on loopback, until
// the test ends.
func start(t *testing.T, yaml string, args ...any) *started {
	t.Helper()
	cfg, err := proxy.Parse("test.yaml", fmt.Appendf(nil, yaml, args...))
	if err != nil {
		t.Fatal(err)
	}
	return startConfig(t, cfg)
}

func startConfig(t *testing.T, cfg *proxy.Config, opts ...proxy.Option) *started {
	t.Helper()
	l := &logs{}
	p, err := proxy.New(cfg, append([]proxy.Option{proxy.WithLogger(slog.New(l))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &started{Proxy: p, URL: srv.URL, logs: l}
}

// eventually polls cond until it holds, for up to waitFor, and fails the
// test with what if it never does.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", waitFor, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
