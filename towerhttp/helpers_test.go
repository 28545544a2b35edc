package towerhttp_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towerhttp"
)

type (
	serverLayer = tower.Layer[*http.Request, towerhttp.Response]
	clientLayer = tower.Layer[*http.Request, *http.Response]
)

// checkGoroutines records how many goroutines run now and, when the test
// ends, waits until no more run than that, failing t with every
// goroutine's stack if that takes more than 10 seconds. Real network
// tests cannot run in a synctest bubble, which would catch a leak itself;
// this bounded poll is their check. Call it first, so that it runs after
// the cleanups that close servers and connections.
func checkGoroutines(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("got %d goroutines at the end of the test, want at most %d:\n%s", n, before, buf)
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
}

// discardLog is a server's error log that goes nowhere.
var discardLog = log.New(io.Discard, "", 0)

// newServer starts an httptest server for h whose error log is discarded
// (a panicking handler logs there), and closes it, and the default
// client's idle connections, when the test ends.
func newServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = discardLog
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// gate is a handler that tells when a request has arrived and holds it
// until released, then answers 200 with its name.
type gate struct {
	name    string
	arrived chan struct{}
	release chan struct{}
	served  atomic.Int32
}

func newGate(name string) *gate {
	return &gate{name: name, arrived: make(chan struct{}, 16), release: make(chan struct{})}
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.arrived <- struct{}{}
	select {
	case <-g.release:
	case <-r.Context().Done():
		return
	}
	g.served.Add(1)
	io.WriteString(w, g.name)
}

// get sends a GET to url with client and returns the status, the
// Retry-After header and the body, or the error.
func get(ctx context.Context, client *http.Client, url string) (int, string, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b), err
}

// mustGet is get that fails t on an error.
func mustGet(t *testing.T, client *http.Client, url string) (int, string, string) {
	t.Helper()
	code, retry, body, err := get(t.Context(), client, url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return code, retry, body
}

// bodyTracker is a RoundTripper that counts the response bodies its base
// returned and not yet closed.
type bodyTracker struct {
	base  http.RoundTripper
	mu    sync.Mutex
	open  int
	total int
}

func (bt *bodyTracker) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := bt.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	bt.mu.Lock()
	bt.open++
	bt.total++
	bt.mu.Unlock()
	resp.Body = &trackedBody{ReadCloser: resp.Body, bt: bt}
	return resp, nil
}

func (bt *bodyTracker) counts() (open, total int) {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	return bt.open, bt.total
}

// check fails t unless total responses came back and none is open.
func (bt *bodyTracker) check(t *testing.T, total int) {
	t.Helper()
	open, got := bt.counts()
	if got != total || open != 0 {
		t.Errorf("got %d responses from the base, %d of them with their body open; want %d, none open", got, open, total)
	}
}

type trackedBody struct {
	io.ReadCloser
	bt   *bodyTracker
	once sync.Once
}

func (b *trackedBody) Close() error {
	b.once.Do(func() {
		b.bt.mu.Lock()
		b.bt.open--
		b.bt.mu.Unlock()
	})
	return b.ReadCloser.Close()
}

// fakeBase is a RoundTripper that answers each request with a response
// from answer, without a network, for tests in a synctest bubble.
type fakeBase func(req *http.Request) (*http.Response, error)

func (f fakeBase) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// textResponse returns a response with status code and body text, whose
// body reports its Close to closed, if closed is not nil.
func textResponse(req *http.Request, code int, text string, closed *atomic.Int32) *http.Response {
	var body io.ReadCloser = io.NopCloser(strings.NewReader(text))
	if closed != nil {
		body = &closeCounter{ReadCloser: body, n: closed}
	}
	return &http.Response{
		StatusCode:    code,
		Status:        fmt.Sprintf("%d %s", code, http.StatusText(code)),
		Header:        http.Header{},
		Body:          body,
		ContentLength: int64(len(text)),
		Request:       req,
	}
}

type closeCounter struct {
	io.ReadCloser
	n *atomic.Int32
}

func (c *closeCounter) Close() error {
	c.n.Add(1)
	return c.ReadCloser.Close()
}
