package towerhttp_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towerhttp"
)

// Bad input over loopback, from a raw connection: what net/http answers
// itself, and clients that leave in the middle of a request.

// countReady is a layer that counts the Ready calls of the service it
// wraps.
func countReady(n *atomic.Int32) serverLayer {
	return tower.LayerFunc[*http.Request, towerhttp.Response](func(inner tower.Service[*http.Request, towerhttp.Response]) tower.Service[*http.Request, towerhttp.Response] {
		return readyCounter{inner, n}
	})
}

type readyCounter struct {
	tower.Service[*http.Request, towerhttp.Response]
	n *atomic.Int32
}

func (c readyCounter) Ready(ctx context.Context) (tower.Permit[*http.Request, towerhttp.Response], error) {
	c.n.Add(1)
	return c.Service.Ready(ctx)
}

// rawRequest writes raw to a new connection to addr and returns the first
// line of the answer.
func rawRequest(t *testing.T, addr, raw string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return strings.TrimSpace(line)
}

// A malformed request never reaches the Handler: net/http answers 400
// itself. The stack is not asked for anything, and the server goes on
// serving.
func TestMalformedRequestIsNetHTTPs(t *testing.T) {
	checkGoroutines(t)
	var readies atomic.Int32
	srv := newServer(t, towerhttp.NewHandler(ok, tower.Stack(countReady(&readies), shedOverLimit(1))))
	addr := srv.Listener.Addr().String()
	for _, tt := range []struct {
		name string
		raw  string
	}{
		{"header without colon", "GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n"},
		{"bad request line", "GET\r\n\r\n"},
		{"two Content-Lengths", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := rawRequest(t, addr, tt.raw); got != "HTTP/1.1 400 Bad Request" {
				t.Errorf("got %q, want %q", got, "HTTP/1.1 400 Bad Request")
			}
		})
	}
	if n := readies.Load(); n != 0 {
		t.Errorf("the stack's Ready was called %d times, want 0", n)
	}
	client := srv.Client()
	t.Cleanup(client.CloseIdleConnections)
	if code, _, body := mustGet(t, client, srv.URL); code != 200 || body != "ok" {
		t.Errorf("a good request after them: got %d %q, want 200 %q", code, body, "ok")
	}
}

// A client that sends its headers, part of its body or none, and goes
// away: the handler's read fails or its context ends, the permit of
// ConcurrencyLimit(1) is given back, the next request is served, and no
// goroutine is left.
func TestClientSendsHeadersAndDisappears(t *testing.T) {
	for _, tt := range []struct {
		name string
		raw  string
	}{
		{"without a body", "GET / HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"in the middle of its body", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkGoroutines(t)
			arrived := make(chan struct{}, 2)
			readErr := make(chan error, 2)
			srv := newServer(t, towerhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				arrived <- struct{}{}
				if r.Method == http.MethodPost {
					_, err := io.ReadAll(r.Body)
					readErr <- err
					return
				}
				if r.Header.Get("X-Next") == "" {
					<-r.Context().Done()
					return
				}
				io.WriteString(w, "next")
			}), limit1()))

			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(conn, tt.raw)
			<-arrived
			conn.Close()
			if strings.HasPrefix(tt.raw, "POST") {
				if err := <-readErr; !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Errorf("the handler's read got %v, want io.ErrUnexpectedEOF", err)
				}
			}

			// The deadline only turns a permit never given back into a
			// failure rather than a hang.
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			req.Header.Set("X-Next", "1")
			client := srv.Client()
			t.Cleanup(client.CloseIdleConnections)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("the next request: %v (was the permit given back?)", err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(b) != "next" {
				t.Errorf("the next request: got %d %q, want 200 %q", resp.StatusCode, b, "next")
			}
		})
	}
}
