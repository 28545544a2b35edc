package towerhttp_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towerhttp"
)

// The tests in this file run real servers on loopback.

// newClient returns a client whose Transport runs stack over a
// bodyTracker over a transport of its own, and cleans both up.
func newClient(t *testing.T, stack clientLayer, opts ...towerhttp.TransportOption) (*http.Client, *towerhttp.Transport, *bodyTracker) {
	t.Helper()
	base := &http.Transport{}
	bt := &bodyTracker{base: base}
	tr := towerhttp.NewTransport(bt, stack, opts...)
	t.Cleanup(func() {
		tr.Close()
		base.CloseIdleConnections()
	})
	return &http.Client{Transport: tr}, tr, bt
}

func clientShedOverLimit(n int) clientLayer {
	return tower.Stack(
		loadshed.NewLayer[*http.Request, *http.Response](),
		limit.NewConcurrencyLayer[*http.Request, *http.Response](n),
	)
}

// Each host gets a stack of its own: with LoadShed > ConcurrencyLimit(1),
// a request in flight to A sheds a second one to A, not one to B.
func TestTransportStackPerHost(t *testing.T) {
	checkGoroutines(t)
	a, b := newGate("a"), newGate("b")
	srvA, srvB := newServer(t, a), newServer(t, b)
	close(b.release)
	client, tr, bt := newClient(t, clientShedOverLimit(1))

	done := make(chan error, 1)
	go func() {
		_, _, _, err := get(t.Context(), client, srvA.URL)
		done <- err
	}()
	<-a.arrived
	if _, _, _, err := get(t.Context(), client, srvA.URL); !errors.Is(err, loadshed.ErrOverloaded) {
		t.Errorf("a second request to A: got %v, want loadshed.ErrOverloaded", err)
	}
	if code, _, body := mustGet(t, client, srvB.URL); code != 200 || body != "b" {
		t.Errorf("a request to B: got %d %q, want 200 %q", code, body, "b")
	}
	close(a.release)
	if err := <-done; err != nil {
		t.Errorf("the first request to A: %v", err)
	}
	if n := tr.Hosts(); n != 2 {
		t.Errorf("got %d host stacks, want 2", n)
	}
	bt.check(t, 2)
}

// WithMaxHosts(1): a second host waits for no stack; while A has a
// request in flight a request to B fails with ErrTooManyHosts; once A is
// idle, its stack is dropped for B's.
func TestTransportMaxHosts(t *testing.T) {
	checkGoroutines(t)
	a, b := newGate("a"), newGate("b")
	srvA, srvB := newServer(t, a), newServer(t, b)
	close(b.release)
	client, tr, bt := newClient(t, clientShedOverLimit(1), towerhttp.WithMaxHosts(1))

	done := make(chan error, 1)
	go func() {
		_, _, _, err := get(t.Context(), client, srvA.URL)
		done <- err
	}()
	<-a.arrived
	if _, _, _, err := get(t.Context(), client, srvB.URL); !errors.Is(err, towerhttp.ErrTooManyHosts) {
		t.Errorf("a request to B while A is busy: got %v, want ErrTooManyHosts", err)
	}
	close(a.release)
	if err := <-done; err != nil {
		t.Errorf("the request to A: %v", err)
	}
	if code, _, body := mustGet(t, client, srvB.URL); code != 200 || body != "b" {
		t.Errorf("a request to B once A is idle: got %d %q, want 200 %q", code, body, "b")
	}
	if n := tr.Hosts(); n != 1 {
		t.Errorf("got %d host stacks, want 1", n)
	}
	bt.check(t, 2)
}

// flaky answers 503 to the first n requests and 200 after, and records
// the bodies it was sent.
type flaky struct {
	mu     sync.Mutex
	n      int
	bodies []string
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, string(b))
	fail := len(f.bodies) <= f.n
	f.mu.Unlock()
	if fail {
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	io.WriteString(w, "ok")
}

func (f *flaky) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.bodies...)
}

// Retry over loopback: the first attempt is answered 503, the second
// sends the same body again, made by GetBody, and succeeds. The 503's body
// is closed by the transport.
func TestTransportRetryReplaysBody(t *testing.T) {
	checkGoroutines(t)
	f := &flaky{n: 1}
	srv := newServer(t, f)
	client, _, bt := newClient(t, retry.NewLayer[*http.Request, *http.Response](newBodyRetryPolicy()))

	resp, err := client.Post(srv.URL, "text/plain", strings.NewReader("payload"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ok" {
		t.Errorf("got %d %q, want 200 %q", resp.StatusCode, b, "ok")
	}
	if got := f.sent(); len(got) != 2 || got[0] != "payload" || got[1] != "payload" {
		t.Errorf("the server got bodies %q, want %q twice", got, "payload")
	}
	bt.check(t, 2)
}

// A body that cannot be replayed (no GetBody) is sent once, and its 503
// is the caller's.
func TestTransportRetryWithoutGetBody(t *testing.T) {
	checkGoroutines(t)
	f := &flaky{n: 1}
	srv := newServer(t, f)
	client, _, bt := newClient(t, retry.NewLayer[*http.Request, *http.Response](newBodyRetryPolicy()))

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, io.MultiReader(strings.NewReader("stream")))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || len(f.sent()) != 1 {
		t.Errorf("got %d after %d attempts, want 503 after 1", resp.StatusCode, len(f.sent()))
	}
	bt.check(t, 1)
}

// A Timeout in a transport's stack times the round trip up to the
// response's headers; the body, read after the stack has answered, is
// read under the request's own context and arrives whole.
func TestTransportTimeoutLeavesBodyReadable(t *testing.T) {
	checkGoroutines(t)
	release := make(chan struct{})
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "head ")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "and tail")
	}))
	client, _, bt := newClient(t, timeout.NewLayer[*http.Request, *http.Response](time.Minute))
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	// The Timeout's call has returned, and its context has ended.
	close(release)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(b) != "head and tail" {
		t.Errorf("got body %q, %v; want %q", b, err, "head and tail")
	}
	bt.check(t, 1)
}

// A Timeout whose deadline passes before the headers: the request is
// cancelled and the caller gets timeout.ErrElapsed.
func TestTransportTimeoutElapsed(t *testing.T) {
	checkGoroutines(t)
	srv := newServer(t, hold{})
	client, _, bt := newClient(t, timeout.NewLayer[*http.Request, *http.Response](20*time.Millisecond))
	if _, _, _, err := get(t.Context(), client, srv.URL); !errors.Is(err, timeout.ErrElapsed) {
		t.Errorf("got %v, want timeout.ErrElapsed", err)
	}
	bt.check(t, 0)
}

// A layer that turns a 500 into an error discards the response: its body
// is closed.
func TestTransportClosesDiscardedResponse(t *testing.T) {
	checkGoroutines(t)
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	errServer := errors.New("server error")
	client, _, bt := newClient(t, tower.MapResultLayer[*http.Request](func(resp *http.Response, err error) (*http.Response, error) {
		if err == nil && resp.StatusCode >= 500 {
			return nil, errServer
		}
		return resp, err
	}))
	if _, err := client.Get(srv.URL); !errors.Is(err, errServer) {
		t.Errorf("got %v, want %v", err, errServer)
	}
	bt.check(t, 1)
}

// A request shed before it was sent has its body closed by the transport,
// as a RoundTripper must.
func TestTransportClosesBodyOfShedRequest(t *testing.T) {
	checkGoroutines(t)
	g := newGate("a")
	srv := newServer(t, g)
	client, _, _ := newClient(t, clientShedOverLimit(1))
	done := make(chan error, 1)
	go func() {
		_, _, _, err := get(t.Context(), client, srv.URL)
		done <- err
	}()
	<-g.arrived
	var closed atomic.Int32
	body := &closeCounter{ReadCloser: io.NopCloser(strings.NewReader("x")), n: &closed}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, body)
	if _, err := client.Do(req); !errors.Is(err, loadshed.ErrOverloaded) {
		t.Errorf("got %v, want loadshed.ErrOverloaded", err)
	}
	if n := closed.Load(); n != 1 {
		t.Errorf("the shed request's body was closed %d times, want 1", n)
	}
	close(g.release)
	<-done
}

// Five spellings of one host (case, trailing dot, the scheme's default
// port) share one stack, and so one ConcurrencyLimit(1): while a request to
// one spelling is in flight, a request to any other is shed. A port that
// is not the default, or another scheme, is another host.
func TestTransportCanonicalHosts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		arrived, release := make(chan struct{}), make(chan struct{})
		base := fakeBase(func(req *http.Request) (*http.Response, error) {
			if req.URL.Path == "/hold" {
				arrived <- struct{}{}
				<-release
			}
			return textResponse(req, 200, "ok", nil), nil
		})
		tr := towerhttp.NewTransport(base, clientShedOverLimit(1))
		done := make(chan error, 1)
		go func() {
			resp, err := tr.RoundTrip(mustRequest(t, "http://example.com/hold"))
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		<-arrived
		for _, u := range []string{"http://example.com/", "http://EXAMPLE.com/", "http://example.com./", "http://example.com:80/", "http://Example.COM.:80/"} {
			if _, err := tr.RoundTrip(mustRequest(t, u)); !errors.Is(err, loadshed.ErrOverloaded) {
				t.Errorf("GET %s while example.com has a request in flight: got %v, want loadshed.ErrOverloaded", u, err)
			}
		}
		for _, u := range []string{"http://example.com:8080/", "https://example.com/", "http://[::1]:80/", "http://[::1]/"} {
			resp, err := tr.RoundTrip(mustRequest(t, u))
			if err != nil {
				t.Errorf("GET %s: got %v, want a response", u, err)
				continue
			}
			resp.Body.Close()
		}
		close(release)
		if err := <-done; err != nil {
			t.Errorf("the request held: %v", err)
		}
		if n := tr.Hosts(); n != 4 {
			t.Errorf("got %d host stacks, want 4: example.com, example.com:8080, https://example.com, [::1]", n)
		}
	})
}

func mustRequest(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
