package towerhttp_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towerhttp"
	"github.com/towergo/tower/towertest"
)

type endpoint = load.Service[*http.Request, *http.Response]

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Two backends over loopback, each endpoint under ConcurrencyLimit(1):
// with one request held by a backend, its endpoint is not ready, and the
// balancer sends the next request to the other. Each request keeps its
// path and its Host header.
func TestBalancedTransportOverTwoServers(t *testing.T) {
	checkGoroutines(t)
	a, b := newGate("a"), newGate("b")
	var hosts [2]atomic.Value
	record := func(i int, g *gate) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hosts[i].Store(r.Host + r.URL.Path)
			g.ServeHTTP(w, r)
		})
	}
	srvA, srvB := newServer(t, record(0, a)), newServer(t, record(1, b))
	base := &http.Transport{}
	bt := &bodyTracker{base: base}
	t.Cleanup(base.CloseIdleConnections)
	perBackend := limit.NewConcurrencyLayer[*http.Request, *http.Response](1)
	tr := towerhttp.NewBalancedTransport(discover.NewList(
		towerhttp.NewEndpoint(bt, mustParse(t, srvA.URL), perBackend),
		towerhttp.NewEndpoint(bt, mustParse(t, srvB.URL), perBackend),
	), tower.Stack[*http.Request, *http.Response]())
	t.Cleanup(func() { tr.Close() })
	client := &http.Client{Transport: tr}

	bodies := make(chan string, 2)
	for range 2 {
		go func() {
			_, _, body, err := get(t.Context(), client, "http://backend.example/path")
			if err != nil {
				body = err.Error()
			}
			bodies <- body
		}()
		select { // whichever backend it went to
		case <-a.arrived:
		case <-b.arrived:
		}
	}
	close(a.release)
	close(b.release)
	got := map[string]bool{<-bodies: true, <-bodies: true}
	if !got["a"] || !got["b"] {
		t.Errorf("got answers %v, want one from a and one from b", got)
	}
	for i := range hosts {
		if h := hosts[i].Load(); h != "backend.example/path" {
			t.Errorf("backend %d got Host and path %v, want %q", i, h, "backend.example/path")
		}
	}
	bt.check(t, 2)
}

// The endpoint's load counts a request until its body is closed, not until
// its headers are in.
func TestBodyCompletionKeepsRequestPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var closed atomic.Int32
		base := fakeBase(func(req *http.Request) (*http.Response, error) {
			return textResponse(req, 200, "body", &closed), nil
		})
		pending := load.NewPendingRequests(
			towerhttp.NewEndpoint(base, mustParse(t, "http://x"), tower.Stack[*http.Request, *http.Response]()),
			load.WithCompletion[*http.Response](towerhttp.BodyCompletion{}),
		)
		tr := towerhttp.NewBalancedTransport(discover.NewList[endpoint](pending), tower.Stack[*http.Request, *http.Response]())
		defer tr.Close()
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://svc/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := pending.Load(); got != 1 {
			t.Errorf("load with the body open: got %v, want 1", got)
		}
		io.ReadAll(resp.Body)
		if got := pending.Load(); got != 0 {
			t.Errorf("load with the body read to its end: got %v, want 0", got)
		}
		resp.Body.Close()
		if got := pending.Load(); got != 0 || closed.Load() != 1 {
			t.Errorf("after Close: got load %v, %d closes; want 0, 1", got, closed.Load())
		}
	})
}

// A balancer with no endpoints, built WithFailFast, fails at once with
// balance.ErrNoEndpoints.
func TestBalancedTransportNoEndpoints(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := towerhttp.NewBalancedTransport(discover.NewList[endpoint](), tower.Stack[*http.Request, *http.Response](), balance.WithFailFast())
		defer tr.Close()
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://svc/", nil)
		if _, err := tr.RoundTrip(req); !errors.Is(err, balance.ErrNoEndpoints) {
			t.Errorf("got %v, want balance.ErrNoEndpoints", err)
		}
	})
}

// Shutdown of a BalancedTransport whose Discover ignores its context
// returns at the caller's deadline, and requests fail with
// balance.ErrClosed from then on; the discovery goroutine exits once the
// Discover returns.
func TestBalancedTransportShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		deaf := make(chan discover.Change[int, endpoint])
		tr := towerhttp.NewBalancedTransport[int](discoverIgnoringCtx(deaf), tower.Stack[*http.Request, *http.Response]())
		synctest.Wait() // the discovery goroutine waits in Next
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := tr.Shutdown(ctx); err != context.DeadlineExceeded || time.Since(start) != 10*time.Millisecond {
			t.Errorf("Shutdown: got %v at %v, want %v at 10ms", err, time.Since(start), context.DeadlineExceeded)
		}
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://svc/", nil)
		if _, err := tr.RoundTrip(req); !errors.Is(err, balance.ErrClosed) {
			t.Errorf("RoundTrip after Shutdown: got %v, want balance.ErrClosed", err)
		}
		close(deaf)
		if err := tr.Shutdown(t.Context()); err != nil {
			t.Errorf("second Shutdown: %v", err)
		}
	})
}

// discoverIgnoringCtx is a Discover that waits for its channel whatever
// its context says.
type discoverIgnoringCtx chan discover.Change[int, endpoint]

func (d discoverIgnoringCtx) Next(ctx context.Context) (discover.Change[int, endpoint], error) {
	if ctx.Err() != nil {
		select {
		case ch, ok := <-d:
			if !ok {
				return ch, io.EOF
			}
			return ch, nil
		default:
			return discover.Change[int, endpoint]{}, ctx.Err()
		}
	}
	ch, ok := <-d
	if !ok {
		return ch, io.EOF
	}
	return ch, nil
}

// A Timeout in Abandon mode answers at its deadline while the base is
// still waiting for headers; the response that comes later has nobody to
// read it, and its body is closed.
func TestTransportLateResponseIsClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var closed atomic.Int32
		release := make(chan struct{})
		base := fakeBase(func(req *http.Request) (*http.Response, error) {
			<-release // ignores the request's context
			return textResponse(req, 200, "late", &closed), nil
		})
		tr := towerhttp.NewTransport(base, timeout.NewLayer[*http.Request, *http.Response](100*time.Millisecond, timeout.WithMode(timeout.Abandon)))
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://x/", nil)
		start := time.Now()
		if _, err := tr.RoundTrip(req); !errors.Is(err, timeout.ErrElapsed) || time.Since(start) != 100*time.Millisecond {
			t.Errorf("got %v at %v, want timeout.ErrElapsed at 100ms", err, time.Since(start))
		}
		close(release)
		synctest.Wait()
		if n := closed.Load(); n != 1 {
			t.Errorf("the late response's body was closed %d times, want 1", n)
		}
	})
}

// A hedge-like layer that sends a request twice and keeps the second
// answer: the first response is drained and closed, the one returned is
// not.
func TestTransportDiscardsAllButTheAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var closed atomic.Int32
		n := 0
		base := fakeBase(func(req *http.Request) (*http.Response, error) {
			n++
			return textResponse(req, 200, string(rune('0'+n)), &closed), nil
		})
		twice := tower.LayerFunc[*http.Request, *http.Response](func(inner tower.Service[*http.Request, *http.Response]) tower.Service[*http.Request, *http.Response] {
			return tower.ServiceFunc[*http.Request, *http.Response](func(ctx context.Context, req *http.Request) (*http.Response, error) {
				if _, err := tower.Call(ctx, inner, req); err != nil {
					return nil, err
				}
				return tower.Call(ctx, inner, req)
			})
		})
		tr := towerhttp.NewTransport(base, twice)
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://x/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if closed.Load() != 1 {
			t.Errorf("got %d bodies closed before the caller's, want 1", closed.Load())
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "2" || closed.Load() != 2 {
			t.Errorf("got body %q and %d closed, want %q and 2", b, closed.Load(), "2")
		}
	})
}

func TestCloneRequest(t *testing.T) {
	var opened atomic.Int32
	withBody, _ := http.NewRequest("POST", "http://x/", nil)
	withBody.Body = io.NopCloser(nil)
	withBody.GetBody = func() (io.ReadCloser, error) {
		opened.Add(1)
		return io.NopCloser(strings.NewReader("again")), nil
	}
	clone, ok := towerhttp.CloneRequest(withBody)
	if !ok || clone == withBody {
		t.Fatalf("CloneRequest of a request with GetBody: got %p, %v; want a copy, true", clone, ok)
	}
	if opened.Load() != 0 {
		t.Error("CloneRequest called GetBody before the copy was read")
	}
	clone.Body.Close()
	if opened.Load() != 0 {
		t.Error("closing an unread copy called GetBody")
	}
	clone, _ = towerhttp.CloneRequest(withBody)
	b, err := io.ReadAll(clone.Body)
	if string(b) != "again" || err != nil || opened.Load() != 1 {
		t.Errorf("reading the copy: got %q, %v, GetBody called %d times; want %q, nil, 1", b, err, opened.Load(), "again")
	}

	noBody, _ := http.NewRequest("GET", "http://x/", nil)
	if clone, ok := towerhttp.CloneRequest(noBody); !ok || clone.Body != nil {
		t.Errorf("CloneRequest of a request without a body: got body %v, %v; want nil, true", clone.Body, ok)
	}
	stream, _ := http.NewRequest("POST", "http://x/", io.MultiReader())
	if clone, ok := towerhttp.CloneRequest(stream); ok || clone != nil {
		t.Errorf("CloneRequest of a request without GetBody: got %v, %v; want nil, false", clone, ok)
	}
}

// clientWrapsInNil is a layer that returns a typed nil service.
var clientWrapsInNil = tower.LayerFunc[*http.Request, *http.Response](func(tower.Service[*http.Request, *http.Response]) tower.Service[*http.Request, *http.Response] {
	return (*nilClientService)(nil)
})

type nilClientService struct{}

func (*nilClientService) Ready(context.Context) (tower.Permit[*http.Request, *http.Response], error) {
	panic("a nil service was used")
}

func TestTransportConstructorsPanic(t *testing.T) {
	none := tower.Stack[*http.Request, *http.Response]()
	base := http.DefaultTransport
	for _, tt := range []struct {
		want string
		f    func()
	}{
		{"towerhttp.NewTransport: nil base RoundTripper", func() { towerhttp.NewTransport(nil, none) }},
		{"towerhttp.NewTransport: nil stack", func() { towerhttp.NewTransport(base, nil) }},
		{"towerhttp.NewTransport: option 0 is nil", func() { towerhttp.NewTransport(base, none, nil) }},
		{"towerhttp.WithMaxHosts: n must be at least 1, got 0", func() { towerhttp.WithMaxHosts(0) }},
		{"towerhttp.NewEndpoint: nil base RoundTripper", func() { towerhttp.NewEndpoint(nil, &url.URL{Scheme: "http", Host: "x"}, none) }},
		{"towerhttp.NewEndpoint: nil target", func() { towerhttp.NewEndpoint(base, nil, none) }},
		{"towerhttp.NewEndpoint: target /path lacks a scheme or a host", func() { towerhttp.NewEndpoint(base, &url.URL{Path: "/path"}, none) }},
		{"towerhttp.NewEndpoint: nil stack", func() { towerhttp.NewEndpoint(base, &url.URL{Scheme: "http", Host: "x"}, nil) }},
		{"towerhttp.NewEndpoint: option 0 is nil", func() { towerhttp.NewEndpoint(base, &url.URL{Scheme: "http", Host: "x"}, none, nil) }},
		{"towerhttp.NewBalancedTransport: nil stack", func() { towerhttp.NewBalancedTransport(discover.NewList[endpoint](), nil) }},
		{"towerhttp.NewBalancedTransport: nil Discover", func() {
			towerhttp.NewBalancedTransport[int](nil, none)
		}},
		// Typed nils: a nil in an interface with a type.
		{"towerhttp.NewTransport: nil base RoundTripper", func() { towerhttp.NewTransport((*http.Transport)(nil), none) }},
		{"towerhttp.NewTransport: nil stack", func() { towerhttp.NewTransport(base, tower.LayerFunc[*http.Request, *http.Response](nil)) }},
		{"towerhttp.NewEndpoint: nil base RoundTripper", func() {
			towerhttp.NewEndpoint(fakeBase(nil), &url.URL{Scheme: "http", Host: "x"}, none)
		}},
		{"towerhttp.NewEndpoint: nil stack", func() {
			towerhttp.NewEndpoint(base, &url.URL{Scheme: "http", Host: "x"}, tower.LayerFunc[*http.Request, *http.Response](nil))
		}},
		{"towerhttp.NewEndpoint: stack.Wrap returned nil", func() {
			towerhttp.NewEndpoint(base, &url.URL{Scheme: "http", Host: "x"}, clientWrapsInNil)
		}},
		{"towerhttp.NewBalancedTransport: nil stack", func() {
			towerhttp.NewBalancedTransport(discover.NewList[endpoint](), tower.LayerFunc[*http.Request, *http.Response](nil))
		}},
		{"towerhttp.NewBalancedTransport: nil Discover", func() {
			towerhttp.NewBalancedTransport[int]((*discover.List[endpoint])(nil), none)
		}},
		{"towerhttp.Transport: stack.Wrap returned nil", func() {
			towerhttp.NewTransport(base, clientWrapsInNil).RoundTrip(httptest.NewRequest("GET", "http://x/", nil))
		}},
	} {
		t.Run(tt.want, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}

// A new endpoint's load is EndpointRTT, Linkerd's 30ms, and with no
// request it fades over EndpointDecay, Linkerd's 10s: to 30ms/e after 10s.
func TestEndpointLoadDefaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		never := fakeBase(func(*http.Request) (*http.Response, error) { return nil, errors.New("not called") })
		ep := towerhttp.NewEndpoint(never, mustParse(t, "http://a"), tower.Stack[*http.Request, *http.Response]())
		if got, want := ep.Load(), float64(30*time.Millisecond); got != want {
			t.Errorf("a new endpoint's load: got %v, want %v", got, want)
		}
		time.Sleep(10 * time.Second)
		if got, want := ep.Load(), float64(30*time.Millisecond)*math.Exp(-1); got != want {
			t.Errorf("its load after 10s: got %v, want %v", got, want)
		}
	})
}
