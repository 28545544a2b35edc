package towerhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towerhttp"
)

// The tests in this file run a real server on loopback: they use the real
// clock, and assert what happened, never how long it took.

// LoadShed > ConcurrencyLimit(1) over loopback: a second request while the
// first is in the handler gets 503 with Retry-After; once the first is
// done, the next one goes through.
func TestServerShedsSecondRequest(t *testing.T) {
	checkGoroutines(t)
	g := newGate("first")
	srv := newServer(t, towerhttp.NewHandler(g, shedOverLimit(1)))
	client := srv.Client()
	t.Cleanup(client.CloseIdleConnections)

	type result struct {
		code int
		body string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, _, body, err := get(t.Context(), client, srv.URL)
		done <- result{code, body, err}
	}()
	<-g.arrived

	code, retryAfter, body := mustGet(t, client, srv.URL)
	if code != 503 || retryAfter != "1" || body != "service overloaded\n" {
		t.Errorf("second request: got %d, Retry-After %q, %q; want 503, Retry-After 1, %q", code, retryAfter, body, "service overloaded\n")
	}
	close(g.release)
	if r := <-done; r.err != nil || r.code != 200 || r.body != "first" {
		t.Errorf("first request: got %d %q %v, want 200 %q", r.code, r.body, r.err, "first")
	}
	if code, _, body := mustGet(t, client, srv.URL); code != 200 || body != "first" {
		t.Errorf("third request: got %d %q, want 200 %q", code, body, "first")
	}
}

// A client that disconnects while its request is in the handler: the
// handler's context ends, the permit of ConcurrencyLimit(1) is given back,
// the next request is served, and no goroutine is left.
func TestServerClientDisconnectsMidRequest(t *testing.T) {
	checkGoroutines(t)
	g := newGate("served")
	srv := newServer(t, towerhttp.NewHandler(g, limit1()))
	client := srv.Client()
	t.Cleanup(client.CloseIdleConnections)

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, _, _, err := get(ctx, client, srv.URL)
		done <- err
	}()
	<-g.arrived
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled request got %v, want context.Canceled", err)
	}
	// Without loadshed the next request would wait for the permit if it
	// had not been given back; it is held until released, then served.
	// A permit never given back would keep it waiting: the deadline is only
	// there to turn that hang into a failure.
	next, cancelNext := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancelNext()
	go func() {
		_, _, _, err := get(next, client, srv.URL)
		done <- err
	}()
	select {
	case <-g.arrived:
	case <-next.Done():
		t.Fatal("the next request never reached the handler: the permit was not given back")
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Errorf("the next request: %v", err)
	}
	if n := g.served.Load(); n != 1 {
		t.Errorf("the handler served %d requests to the end, want 1", n)
	}
}

// A handler that panics: net/http aborts the connection, the client gets
// an error, and the permit is free for the next request.
func TestServerHandlerPanics(t *testing.T) {
	for _, tt := range []struct {
		name  string
		value any
	}{
		{"value", "boom"},
		{"ErrAbortHandler", http.ErrAbortHandler},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkGoroutines(t)
			var served atomic.Int32
			srv := newServer(t, towerhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if served.Add(1) == 1 {
					panic(tt.value)
				}
				io.WriteString(w, "ok")
			}), shedOverLimit(1)))
			client := srv.Client()
			t.Cleanup(client.CloseIdleConnections)
			if _, _, _, err := get(t.Context(), client, srv.URL); err == nil {
				t.Error("the request whose handler panicked got a response, want an error")
			}
			if code, _, body := mustGet(t, client, srv.URL); code != 200 || body != "ok" {
				t.Errorf("the next request: got %d %q, want 200 %q", code, body, "ok")
			}
		})
	}
}

// Timeout over loopback: a handler that waits for its context is answered
// 503 "request timed out".
func TestServerElapsed(t *testing.T) {
	checkGoroutines(t)
	srv := newServer(t, towerhttp.NewHandler(hold{}, timeout.NewLayer[*http.Request, towerhttp.Response](20*time.Millisecond)))
	client := srv.Client()
	t.Cleanup(client.CloseIdleConnections)
	code, retryAfter, body := mustGet(t, client, srv.URL)
	if code != 503 || retryAfter != "" || body != "request timed out\n" {
		t.Errorf("got %d, Retry-After %q, %q; want 503, none, %q", code, retryAfter, body, "request timed out\n")
	}
}

// A body over the limit, declared or not, over loopback: 413 with the
// limit in the message; the connection is closed after it, and the next
// request is served.
func TestServerBodyTooLarge(t *testing.T) {
	checkGoroutines(t)
	var (
		mu  sync.Mutex
		got []string
	)
	srv := newServer(t, towerhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return // the Handler answers 413
		}
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		io.WriteString(w, "read")
	}), limit1(), towerhttp.WithMaxBodyBytes(10)))
	client := srv.Client()
	t.Cleanup(client.CloseIdleConnections)

	for _, tt := range []struct {
		name string
		body io.Reader
		code int
		want string
	}{
		{"declared", strings.NewReader(strings.Repeat("x", 100)), 413, "request body larger than 10 bytes\n"},
		{"chunked", io.MultiReader(strings.NewReader(strings.Repeat("y", 100))), 413, "request body larger than 10 bytes\n"},
		{"within", strings.NewReader("0123456789"), 200, "read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := client.Post(srv.URL, "text/plain", tt.body)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.code || string(b) != tt.want {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, b, tt.code, tt.want)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != "0123456789" {
		t.Errorf("the handler read %q, want only the body within the limit", got)
	}
}

func limit1() serverLayer {
	return limit.NewConcurrencyLayer[*http.Request, towerhttp.Response](1)
}
