package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

// These tests run against servers on loopback, on the real clock; every
// wait is bounded by the context a request carries, or by wait.
const wait = 5 * time.Second

// dialer counts the connections a Transport opens.
type dialer struct{ n atomic.Int32 }

func (d *dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.n.Add(1)
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

// recorder is a fallback that records what it was given.
type recorder struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return &http.Response{StatusCode: http.StatusTeapot, Body: http.NoBody, Request: req}, nil
}

func newTransport(t *testing.T, o Options) (*Transport, *dialer, *recorder) {
	t.Helper()
	d, fb := new(dialer), new(recorder)
	if o.MaxIdlePerHost == 0 {
		o.MaxIdlePerHost = 4
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = time.Minute
	}
	o.Dial = d.dial
	tr := New(fb, o)
	t.Cleanup(tr.Close)
	return tr, d, fb
}

// raw serves every connection to its listener with handle, on a goroutine
// of its own, until the test ends. It returns the listener's address.
func raw(t *testing.T, handle func(c net.Conn, br *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(wait))
				handle(c, bufio.NewReader(c))
			})
		}
	})
	return ln.Addr().String()
}

// readRequest reads one request from br, and its body.
func readRequest(br *bufio.Reader) (*http.Request, string, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(req.Body)
	return req, string(b), err
}

func get(t *testing.T, tr http.RoundTripper, method, url string, body io.Reader) (*http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return tr.RoundTrip(req)
}

// text reads res's body whole and closes it.
func text(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return string(b)
}

func TestKeepAlive(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s host=%s len=%d ua=%q", r.Method, r.URL.RequestURI(), b, r.Host, r.ContentLength, r.UserAgent())
	}))
	defer srv.Close()
	tr, d, fb := newTransport(t, Options{})
	for i, c := range []struct {
		method string
		path   string
		body   string
		want   string
	}{
		{"GET", "/a?x=1", "", `GET /a?x=1  host=` + srv.Listener.Addr().String() + ` len=0 ua=""`},
		{"POST", "/b", "hello", `POST /b hello host=` + srv.Listener.Addr().String() + ` len=5 ua=""`},
		{"POST", "/c", "", `POST /c  host=` + srv.Listener.Addr().String() + ` len=0 ua=""`},
		{"DELETE", "/d", "", `DELETE /d  host=` + srv.Listener.Addr().String() + ` len=0 ua=""`},
	} {
		var body io.Reader
		if c.body != "" {
			body = strings.NewReader(c.body)
		}
		res, err := get(t, tr, c.method, srv.URL+c.path, body)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if got := text(t, res); got != c.want {
			t.Errorf("request %d: got %q, want %q", i, got, c.want)
		}
	}
	if n := d.n.Load(); n != 1 {
		t.Errorf("%d connections opened, want 1 for four requests one after another", n)
	}
	tr.CloseIdleConnections()
	res, err := get(t, tr, "GET", srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	text(t, res)
	if n := d.n.Load(); n != 2 {
		t.Errorf("%d connections opened, want 2: CloseIdleConnections closed the first", n)
	}
	if len(fb.reqs) != 0 {
		t.Errorf("%d requests went to the fallback, want 0", len(fb.reqs))
	}
}

func TestHostAndHeaders(t *testing.T) {
	got := make(chan string, 1)
	addr := raw(t, func(c net.Conn, br *bufio.Reader) {
		var head strings.Builder
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			head.WriteString(line)
			if line == "\r\n" {
				break
			}
		}
		got <- head.String()
		io.WriteString(c, "HTTP/1.1 204 No Content\r\n\r\n")
	})
	tr, _, _ := newTransport(t, Options{})
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/p", nil)
	req.Host = "example.com"
	req.Header.Set("X-A", "1")
	req.Header.Set("User-Agent", "ua/1")
	req.Header.Set("Content-Length", "99") // not the request's: dropped
	req.Close = true
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	head := <-got
	for _, want := range []string{"GET /p HTTP/1.1\r\n", "Host: example.com\r\n", "X-A: 1\r\n", "User-Agent: ua/1\r\n", "Connection: close\r\n"} {
		if !strings.Contains(head, want) {
			t.Errorf("request head %q lacks %q", head, want)
		}
	}
	if strings.Contains(head, "Content-Length") {
		t.Errorf("request head %q has a Content-Length for a request without a body", head)
	}
}

func TestFallback(t *testing.T) {
	tr, d, fb := newTransport(t, Options{})
	big := strings.Repeat("x", MaxBody+1)
	for _, c := range []struct {
		name string
		req  func() *http.Request
	}{
		{"https", func() *http.Request { r, _ := http.NewRequest("GET", "https://127.0.0.1:1/", nil); return r }},
		{"upgrade", func() *http.Request {
			r, _ := http.NewRequest("GET", "http://127.0.0.1:1/", nil)
			r.Header.Set("Upgrade", "websocket")
			return r
		}},
		{"expect", func() *http.Request {
			r, _ := http.NewRequest("PUT", "http://127.0.0.1:1/", strings.NewReader("x"))
			r.Header.Set("Expect", "100-continue")
			return r
		}},
		{"unknown length", func() *http.Request {
			r, _ := http.NewRequest("POST", "http://127.0.0.1:1/", io.NopCloser(strings.NewReader("x")))
			return r
		}},
		{"large body", func() *http.Request {
			r, _ := http.NewRequest("POST", "http://127.0.0.1:1/", strings.NewReader(big))
			return r
		}},
		{"trailer", func() *http.Request {
			r, _ := http.NewRequest("POST", "http://127.0.0.1:1/", strings.NewReader("x"))
			r.Trailer = http.Header{"X-T": nil}
			return r
		}},
		{"connect", func() *http.Request { r, _ := http.NewRequest("CONNECT", "http://127.0.0.1:1/", nil); return r }},
	} {
		res, err := tr.RoundTrip(c.req())
		if err != nil || res.StatusCode != http.StatusTeapot {
			t.Errorf("%s: got %v, %v; want the fallback's 418", c.name, res, err)
		}
	}
	if len(fb.reqs) != 7 || d.n.Load() != 0 {
		t.Errorf("fallback took %d, %d connections opened; want 7 and 0", len(fb.reqs), d.n.Load())
	}
}

func TestFramings(t *testing.T) {
	responses := map[string]string{
		"/chunked": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\nX-T: t\r\n\r\n",
		"/length":  "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"/head":    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
		"/empty":   "HTTP/1.1 204 No Content\r\n\r\n",
		"/close":   "HTTP/1.1 200 OK\r\n\r\nuntil the end",
		"/bye":     "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbye",
		// Both framings: Transfer-Encoding overrides, as net/http reads it.
		"/both":  "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n",
		"/early": "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	}
	addr := raw(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, _, err := readRequest(br)
			if err != nil {
				return
			}
			io.WriteString(c, responses[req.URL.Path])
			if p := req.URL.Path; p == "/close" || p == "/bye" {
				return
			}
		}
	})
	tr, d, _ := newTransport(t, Options{})
	for _, c := range []struct {
		method, path, want string
		trailer            string
		dials              int32 // connections opened so far
	}{
		{"GET", "/chunked", "abcde", "t", 1},
		{"GET", "/length", "hello", "", 1},
		{"HEAD", "/head", "", "", 1},
		{"GET", "/empty", "", "", 1},
		{"GET", "/early", "ok", "", 1},
		{"GET", "/both", "ab", "", 1},
		{"GET", "/close", "until the end", "", 1},
		{"GET", "/length", "hello", "", 2}, // the last one closed its connection
		{"GET", "/bye", "bye", "", 2},
		{"GET", "/length", "hello", "", 3},
	} {
		res, err := get(t, tr, c.method, "http://"+addr+c.path, nil)
		if err != nil {
			t.Fatalf("%s %s: %v", c.method, c.path, err)
		}
		if got := text(t, res); got != c.want {
			t.Errorf("%s %s: body %q, want %q", c.method, c.path, got, c.want)
		}
		if got := res.Trailer.Get("X-T"); got != c.trailer {
			t.Errorf("%s %s: trailer %q, want %q", c.method, c.path, got, c.trailer)
		}
		if n := d.n.Load(); n != c.dials {
			t.Errorf("after %s %s: %d connections opened, want %d", c.method, c.path, n, c.dials)
		}
	}
}

func TestEarlyHintsReachTheTrace(t *testing.T) {
	addr := raw(t, func(c net.Conn, br *bufio.Reader) {
		if _, _, err := readRequest(br); err == nil {
			io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		}
	})
	tr, _, _ := newTransport(t, Options{})
	var hints []string
	ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		hints = append(hints, fmt.Sprint(code, " ", h.Get("Link")))
		return nil
	}})
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/", nil)
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || len(hints) != 1 || hints[0] != "103 </a.css>" {
		t.Errorf("got %d and hints %q; want 200 and [103 </a.css>]", res.StatusCode, hints)
	}
}

func TestBadResponses(t *testing.T) {
	responses := map[string]string{
		"/twolength": "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
		"/switch":    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n",
		"/huge":      "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", maxHeaderBytes) + "\r\n\r\n",
		"/hints":     strings.Repeat("HTTP/1.1 103 Early Hints\r\n\r\n", max1xx+1) + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
	}
	addr := raw(t, func(c net.Conn, br *bufio.Reader) {
		if req, _, err := readRequest(br); err == nil {
			io.WriteString(c, responses[req.URL.Path])
		}
	})
	tr, _, _ := newTransport(t, Options{})
	for path, want := range map[string]string{
		"/twolength": "Content-Length", "/switch": err101.Error(),
		"/huge": errHeaderTooLarge.Error(), "/hints": errTooMany1xx.Error(),
	} {
		res, err := get(t, tr, "GET", "http://"+addr+path, nil)
		if err == nil {
			res.Body.Close()
			t.Errorf("%s: got %d, want an error", path, res.StatusCode)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q, want one about %q", path, err, want)
		}
	}
}

func TestRefusesWhatWouldSplitTheRequest(t *testing.T) {
	tr, d, _ := newTransport(t, Options{})
	for name, mod := range map[string]func(*http.Request){
		"value": func(r *http.Request) { r.Header["X-A"] = []string{"1\r\nX-Injected: 1"} },
		"name":  func(r *http.Request) { r.Header["X A"] = []string{"1"} },
		"host":  func(r *http.Request) { r.Host = "a\r\nb" },
		"method": func(r *http.Request) {
			r.Method = "GET /x HTTP/1.1\r\n"
		},
	} {
		req, _ := http.NewRequest("GET", "http://127.0.0.1:1/", nil)
		mod(req)
		if res, err := tr.RoundTrip(req); err == nil {
			res.Body.Close()
			t.Errorf("%s: sent, want an error", name)
		}
	}
	if n := d.n.Load(); n != 0 {
		t.Errorf("%d connections opened, want 0", n)
	}
}

// A backend that closes each connection after one response, without
// saying so: the next request on it fails, and is sent again on a new
// connection if it can be.
func TestIdleConnectionClosedByBackend(t *testing.T) {
	closed := make(chan struct{}, 10)
	addr := raw(t, func(c net.Conn, br *bufio.Reader) {
		if _, _, err := readRequest(br); err == nil {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
		c.Close()
		closed <- struct{}{}
	})
	tr, d, _ := newTransport(t, Options{})
	served := 0
	for i, c := range []struct {
		method  string
		body    io.Reader
		wantErr bool
		dials   int32
	}{
		{"GET", nil, false, 1},
		{"GET", nil, false, 2},                     // its first try failed: sent again, on a new connection
		{"PUT", strings.NewReader("x"), false, 3},  // idempotent: sent again, its body got anew
		{"POST", strings.NewReader("x"), true, 3},  // not idempotent: not sent again
		{"POST", strings.NewReader("x"), false, 4}, // no idle connection left: a new one
	} {
		ctx, cancel := context.WithTimeout(t.Context(), wait)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, c.method, "http://"+addr+"/", c.body)
		if c.method == "PUT" {
			req.Header.Set("Idempotency-Key", "k")
		}
		res, err := tr.RoundTrip(req)
		if (err != nil) != c.wantErr {
			t.Fatalf("request %d (%s): error %v, want an error: %v", i, c.method, err, c.wantErr)
		}
		if err == nil {
			if got := text(t, res); got != "ok" {
				t.Errorf("request %d: body %q", i, got)
			}
		}
		if n := d.n.Load(); n != c.dials {
			t.Errorf("after request %d (%s): %d connections opened, want %d", i, c.method, n, c.dials)
		}
		// The backend has closed every connection it served before the
		// next request goes.
		for len(closed) > 0 || int32(served) < d.n.Load() {
			select {
			case <-closed:
				served++
			case <-time.After(wait):
				t.Fatal("the backend did not close its connection")
			}
		}
	}
}

func TestAlive(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, c := range []struct {
		name string
		peer func(net.Conn)
		want bool
	}{
		{"idle", func(net.Conn) {}, true},
		{"closed", func(p net.Conn) { p.Close() }, false},
		{"sent something", func(p net.Conn) { io.WriteString(p, "HTTP/1.1 408 Request Timeout\r\n\r\n") }, false},
	} {
		nc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		p, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		c.peer(p)
		want := c.want
		deadline := time.Now().Add(wait)
		for alive(nc) != want && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond) // the peer's FIN or bytes are on their way
		}
		if got := alive(nc); got != want {
			t.Errorf("%s: alive %v, want %v", c.name, got, want)
		}
		nc.Close()
		p.Close()
	}
}

func TestEarlyCloseAndUnsolicitedBytes(t *testing.T) {
	addr := raw(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, _, err := readRequest(br)
			if err != nil {
				return
			}
			switch req.URL.Path {
			case "/long":
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789")
			case "/extra":
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nforged")
			default:
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			}
		}
	})
	tr, d, _ := newTransport(t, Options{})
	res, err := get(t, tr, "GET", "http://"+addr+"/long", nil)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 3)
	io.ReadFull(res.Body, b)
	res.Body.Close() // 7 bytes left on the connection: it cannot serve another
	if _, err := res.Body.Read(b); err == nil {
		t.Error("a read after Close succeeded")
	}
	res, err = get(t, tr, "GET", "http://"+addr+"/extra", nil)
	if err != nil {
		t.Fatal(err)
	}
	text(t, res)
	if n := d.n.Load(); n != 2 {
		t.Errorf("%d connections opened, want 2: the early close's is not used again", n)
	}
	res, err = get(t, tr, "GET", "http://"+addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); got != "ok" {
		t.Errorf("after a response with bytes behind it: body %q, want ok from a new connection", got)
	}
	if n := d.n.Load(); n != 3 {
		t.Errorf("%d connections opened, want 3: bytes behind a response are answers to nothing", n)
	}
}

func TestCancelAndHeaderTimeout(t *testing.T) {
	closed := make(chan struct{}, 4)
	addr := raw(t, func(c net.Conn, br *bufio.Reader) {
		readRequest(br)
		br.ReadByte() // never answers; returns when the client closes
		closed <- struct{}{}
	})
	tr, _, _ := newTransport(t, Options{ResponseHeaderTimeout: 50 * time.Millisecond})
	start := time.Now()
	_, err := get(t, tr, "GET", "http://"+addr+"/", nil)
	if !errors.Is(err, errHeaderTimeout) {
		t.Errorf("header timeout: error %v, want %v", err, errHeaderTimeout)
	}
	if d := time.Since(start); d < 50*time.Millisecond || d > wait {
		t.Errorf("header timeout after %v, want 50ms", d)
	}
	tr2, _, _ := newTransport(t, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/", nil)
	if _, err := tr2.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: error %v, want context.Canceled", err)
	}
	for range 2 {
		select {
		case <-closed:
		case <-time.After(wait):
			t.Fatal("the backend's connection was not closed")
		}
	}
}

func TestCancelWhileReadingTheBody(t *testing.T) {
	addr := raw(t, func(c net.Conn, br *bufio.Reader) {
		readRequest(br)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n01234")
		br.ReadByte()
	})
	tr, _, _ := newTransport(t, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/", nil)
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := io.ReadAll(res.Body); !errors.Is(err, context.Canceled) {
		t.Errorf("body read: error %v, want context.Canceled", err)
	}
	res.Body.Close()
}

func TestNewRefusesBadOptions(t *testing.T) {
	fb := new(recorder)
	for name, f := range map[string]func(){
		"nil fallback":    func() { New(nil, Options{MaxIdlePerHost: 1, IdleTimeout: time.Second}) },
		"no idle":         func() { New(fb, Options{IdleTimeout: time.Second}) },
		"no idle timeout": func() { New(fb, Options{MaxIdlePerHost: 1}) },
		"negative header": func() {
			New(fb, Options{MaxIdlePerHost: 1, IdleTimeout: time.Second, ResponseHeaderTimeout: -1})
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// Close from another goroutine fails a Read that waits for the rest of
// the body, as a streaming response's reader may be stopped.
func TestCloseWhileReading(t *testing.T) {
	addr := raw(t, func(c net.Conn, br *bufio.Reader) {
		readRequest(br)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n01234")
		br.ReadByte()
	})
	tr, _, _ := newTransport(t, Options{})
	res, err := get(t, tr, "GET", "http://"+addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(res.Body)
		done <- err
	}()
	time.AfterFunc(50*time.Millisecond, func() { res.Body.Close() })
	select {
	case err := <-done:
		if err == nil {
			t.Error("the read ended without an error")
		}
	case <-time.After(wait):
		t.Fatal("Close did not end the read")
	}
}

// A request whose body fails to read is not sent again, even on a reused
// connection and with a GetBody: the sender failed, not the connection.
// Its error is the body's.
func TestBodyReadErrorNotRetried(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	tr, d, _ := newTransport(t, Options{})
	res, err := get(t, tr, "GET", srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	text(t, res)
	boom := errors.New("boom")
	gets := 0
	body := func() io.ReadCloser {
		return io.NopCloser(io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(boom)))
	}
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "PUT", srv.URL, body())
	req.ContentLength = 4
	req.Header.Set("Idempotency-Key", "k")
	req.GetBody = func() (io.ReadCloser, error) { gets++; return body(), nil }
	if _, err := tr.RoundTrip(req); !errors.Is(err, boom) {
		t.Errorf("error %v, want the body's", err)
	}
	if gets != 0 || d.n.Load() != 1 {
		t.Errorf("GetBody called %d times, %d connections opened; want 0 and 1", gets, d.n.Load())
	}
}
