package towerhttp_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towerhttp"
)

// The tests in this file run a real server on loopback, with the real
// clock: every wait is bounded, and they assert what happened.

// slowBody is a request body that sends one byte every 50ms, far fewer
// than its length, until stop is closed.
type slowBody struct{ stop <-chan struct{} }

func (b slowBody) Read(p []byte) (int, error) {
	select {
	case <-time.After(50 * time.Millisecond):
		p[0] = 'x'
		return 1, nil
	case <-b.stop:
		return 0, errors.New("uploader stopped")
	}
}

// uploadServer serves, behind LoadShed > Timeout(200ms) >
// ConcurrencyLimit(n), a handler that reads a POST's whole body and
// answers "read", and answers a GET "ok". It reports on arrived each POST
// that reached the handler, and on returned each that left it. With wrap,
// a middleware before the Handler wraps each request's body in
// http.MaxBytesReader, so that the Handler does not get net/http's own.
func uploadServer(t *testing.T, n int, http2, wrap bool) (srv *httptest.Server, arrived, returned <-chan struct{}) {
	in, out := make(chan struct{}, n), make(chan struct{}, n)
	var h http.Handler = towerhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			in <- struct{}{}
			defer func() { out <- struct{}{} }()
			if _, err := io.ReadAll(r.Body); err != nil {
				return // the Handler answers
			}
			io.WriteString(w, "read")
			return
		}
		io.WriteString(w, "ok")
	}), tower.Stack(
		loadshed.NewLayer[*http.Request, towerhttp.Response](),
		timeout.NewLayer[*http.Request, towerhttp.Response](200*time.Millisecond),
		limit.NewConcurrencyLayer[*http.Request, towerhttp.Response](n),
	))
	if wrap {
		h = wrapBody(h)
	}
	srv = httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = discardLog
	if http2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, in, out
}

func wrapBody(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		h.ServeHTTP(w, r)
	})
}

// A Timeout bounds the reading of a request's body: n clients that upload
// a byte every 50ms take all n permits of a ConcurrencyLimit(n), and an
// ordinary GET is shed meanwhile; at the Timeout's deadline, 200ms, their
// reads end, they are answered 503 "request timed out", their permits come
// back, and ordinary GETs are served again. Without a deadline on the
// reads, the uploads would hold the permits for the 50 seconds their
// bodies take.
//
// A body that a middleware wrapped is read under a deadline set around
// each read, since the Handler cannot tell whether net/http has read it
// to its end: its reads end at the deadline too, and the permits come
// back. (What net/http reads of such a body once the handler has answered
// is not bounded, should the deadline pass between two reads, and the
// client may wait for its answer until it has sent its body.)
func TestSlowUploadersEndAtDeadline(t *testing.T) {
	for _, tt := range []struct {
		name          string
		http2, wrap   bool
		slowly        int
		checkAnswered bool
	}{
		{"HTTP/1.1", false, false, 10, true},
		{"HTTP/2", true, false, 4, true},
		{"HTTP/1.1, body wrapped by a middleware", false, true, 10, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkGoroutines(t)
			srv, arrived, returned := uploadServer(t, tt.slowly, tt.http2, tt.wrap)
			client := srv.Client()
			t.Cleanup(client.CloseIdleConnections)
			stop := make(chan struct{})
			defer close(stop)

			answers := make(chan string, tt.slowly)
			for range tt.slowly {
				go func() { answers <- upload(t.Context(), client, srv.URL, stop) }()
			}
			waitAll(t, arrived, tt.slowly, "the uploads did not all reach the handler")
			if code, _, body, err := get(t.Context(), client, srv.URL); err != nil || code != 503 || body != "service overloaded\n" {
				t.Errorf("a GET while the uploads hold every permit: got %d %q %v, want 503 %q", code, body, err, "service overloaded\n")
			}
			waitAll(t, returned, tt.slowly, "the uploads' handlers did not all return: their reads were not bounded")
			for i := range 20 {
				if code, _, body := mustGet(t, client, srv.URL); code != 200 || body != "ok" {
					t.Errorf("GET %d after the uploads' deadline: got %d %q, want 200 %q", i, code, body, "ok")
				}
			}
			if !tt.checkAnswered {
				return
			}
			for range tt.slowly {
				if got := <-answers; got != "503 request timed out\n" {
					t.Errorf("a slow upload: got %q, want %q", got, "503 request timed out\n")
				}
			}
		})
	}
}

// waitAll waits for n values on ch, for at most 10 seconds, and fails t
// with msg if they do not come.
func waitAll(t *testing.T, ch <-chan struct{}, n int, msg string) {
	t.Helper()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	for range n {
		select {
		case <-ch:
		case <-timer.C:
			t.Fatal(msg)
		}
	}
}

// upload POSTs a slowBody of 1,000 bytes to url and returns the answer's
// status and body, or the error. It gives up after 10 seconds, so that an
// upload whose read is not bounded fails the test rather than hang it.
func upload(ctx context.Context, client *http.Client, url string, stop <-chan struct{}) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, io.LimitReader(slowBody{stop}, 1000))
	if err != nil {
		return err.Error()
	}
	req.ContentLength = 1000
	resp, err := client.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, b)
}

// A body that a middleware before the Handler read to its end (to check a
// signature, say) and replaced: net/http, having seen the end of the
// body, is already waiting on the connection for the client's next
// request, and a read deadline left on the connection would end that wait
// when it passed, which net/http takes for a lost client: it cancels the
// contexts of the connection's later requests. A handler that reads part
// of the replaced body and overruns its deadline must leave the next
// request on the connection with a live context.
func TestBodyReadBeforeHandlerKeepsConnection(t *testing.T) {
	checkGoroutines(t)
	h := towerhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			var b [1]byte
			r.Body.Read(b[:]) // a decoder that stops before the end
			<-r.Context().Done()
			time.Sleep(100 * time.Millisecond) // overruns the deadline
			io.WriteString(w, "late")
			return
		}
		fmt.Fprintf(w, "%s %v", r.RemoteAddr, r.Context().Err())
	}), timeout.NewLayer[*http.Request, towerhttp.Response](100*time.Millisecond))
	signed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(w, r)
	})
	var (
		mu    sync.Mutex
		addrs []string
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		addrs = append(addrs, r.RemoteAddr)
		mu.Unlock()
		signed.ServeHTTP(w, r)
	}))
	srv.Config.ErrorLog = discardLog
	srv.Start()
	t.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}, Timeout: 10 * time.Second}
	t.Cleanup(client.CloseIdleConnections)

	resp, err := client.Post(srv.URL, "application/json", strings.NewReader(`{"signed": true}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	code, _, body := mustGet(t, client, srv.URL)
	mu.Lock()
	defer mu.Unlock()
	if len(addrs) != 2 || addrs[0] != addrs[1] {
		t.Fatalf("the requests came from %v, want one connection", addrs)
	}
	if want := addrs[0] + " <nil>"; code != 200 || body != want {
		t.Errorf("the next request on the connection: got %d %q, want 200 %q", code, body, want)
	}
}

// A request that expects 100 Continue, whose handler answers without
// reading the body: net/http does not ask the client for the body, and
// closes the connection after the answer. The Handler gives the handler
// the body it watches (here for the limit of WithMaxBodyBytes) on a copy
// of the request, so that net/http still finds its own body on its own
// request: had the Handler replaced it there, net/http would not know the
// body was never asked for, and would send 100 Continue to read it once
// the handler answered.
func TestExpectContinueNotSentForUnreadBody(t *testing.T) {
	checkGoroutines(t)
	srv := newServer(t, towerhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}), tower.Stack[*http.Request, towerhttp.Response](), towerhttp.WithMaxBodyBytes(1<<20)))
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n")
	line, err := bufio.NewReader(conn).ReadString('\n')
	if got, want := strings.TrimSpace(line), "HTTP/1.1 401 Unauthorized"; err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}
