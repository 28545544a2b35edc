package proxy_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// bodyBackend reads its request's body and answers its length; it counts
// the requests it got.
func bodyBackend(t *testing.T) (string, *atomic.Int64) {
	var n atomic.Int64
	url := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		fmt.Fprint(w, len(b))
	})).URL
	return url, &n
}

// dialRaw opens a connection to addr whose every wait ends within 10s.
func dialRaw(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	return conn, bufio.NewReader(conn)
}

// closedWithin reports whether the peer closes conn (br reads EOF or a
// reset, after any response) within d, which must be shorter than the
// connection's deadline.
func closedWithin(br *bufio.Reader, d time.Duration) (time.Duration, bool) {
	start := time.Now()
	_, err := io.Copy(io.Discard, br)
	took := time.Since(start)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return took, false
	}
	return took, took < d
}

// A header over max_header_bytes is answered 431 (net/http reads 4KiB
// more than the bound before it gives up).
func TestMaxHeaderBytes(t *testing.T) {
	backend, n := bodyBackend(t)
	p := startProxy(t, config([]string{backend}, "server: {max_header_bytes: 1KiB}", ""))
	req := mustRequest(t, "GET", p.URL("/"), nil)
	req.Header.Set("X-Big", strings.Repeat("x", 8<<10))
	res, _ := do(t, client(t), req)
	if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge || n.Load() != 0 {
		t.Errorf("got %d, backend reached %d times; want 431 and none", res.StatusCode, n.Load())
	}
	res, _ = do(t, client(t), mustRequest(t, "GET", p.URL("/"), nil))
	if res.StatusCode != 200 {
		t.Errorf("a small header: got %d, want 200", res.StatusCode)
	}
}

// A body over max_body_bytes is answered 413: at once if its length says
// so, without reaching a backend; when the proxy has read too much of it
// if it comes chunked.
func TestMaxBodyBytes(t *testing.T) {
	backend, n := bodyBackend(t)
	p := startProxy(t, config([]string{backend}, "server: {max_body_bytes: 1KiB}", ""))
	c := client(t)
	res, _ := do(t, c, mustRequest(t, "POST", p.URL("/"), strings.NewReader(strings.Repeat("x", 2048))))
	if res.StatusCode != http.StatusRequestEntityTooLarge || n.Load() != 0 {
		t.Errorf("declared: got %d, backend reached %d times; want 413 and none", res.StatusCode, n.Load())
	}
	chunked := mustRequest(t, "POST", p.URL("/"), io.MultiReader(strings.NewReader(strings.Repeat("x", 2048))))
	res, _ = do(t, c, chunked)
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked: got %d, want 413", res.StatusCode)
	}
	res, body := do(t, c, mustRequest(t, "POST", p.URL("/"), io.MultiReader(strings.NewReader(strings.Repeat("x", 1000)))))
	if res.StatusCode != 200 || body != "1000" {
		t.Errorf("within the bound: got %d %q, want 200 1000", res.StatusCode, body)
	}
}

// A client that sends its header slowly (slowloris) is cut off at
// read_header_timeout, and a kept-alive connection left idle at
// idle_timeout.
func TestSlowHeaderAndIdleConnectionsClosed(t *testing.T) {
	backend, _ := bodyBackend(t)
	p := startProxy(t, config([]string{backend}, "server: {read_header_timeout: 300ms, idle_timeout: 300ms}", ""))
	t.Run("slowloris", func(t *testing.T) {
		conn, br := dialRaw(t, p.Addr)
		go func() {
			for _, s := range []string{"GET / HTTP/1.1\r\n", "Host: x\r\n", "X-A: 1\r\n", "X-B: 2\r\n", "X-C: 3\r\n", "X-D: 4\r\n", "X-E: 5\r\n", "X-F: 6\r\n"} {
				if _, err := io.WriteString(conn, s); err != nil {
					return
				}
				time.Sleep(150 * time.Millisecond)
			}
		}()
		if took, ok := closedWithin(br, 5*time.Second); !ok {
			t.Errorf("the connection was still open after %v, want it closed after 300ms", took)
		}
	})
	t.Run("idle", func(t *testing.T) {
		conn, br := dialRaw(t, p.Addr)
		io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		if took, ok := closedWithin(br, 5*time.Second); !ok || took < 200*time.Millisecond {
			t.Errorf("the idle connection was closed after %v, want after about 300ms", took)
		}
	})
}

// A body whose next bytes do not come within body_timeout is answered 408
// and its connection closed; one that keeps coming, slowly, for longer
// than body_timeout in all, is served.
func TestSlowBody(t *testing.T) {
	backend, _ := bodyBackend(t)
	p := startProxy(t, config([]string{backend}, "server: {body_timeout: 300ms}", ""))
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("stalled, chunked %v", chunked), func(t *testing.T) {
			conn, br := dialRaw(t, p.Addr)
			if chunked {
				io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n")
			} else {
				io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
			}
			start := time.Now()
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusRequestTimeout {
				t.Errorf("got %d after %v, want 408", res.StatusCode, time.Since(start))
			}
			if took, ok := closedWithin(br, 5*time.Second); !ok {
				t.Errorf("the connection was still open %v after the 408, want it closed", took)
			}
		})
	}
	t.Run("slow but steady", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			for range 8 {
				pw.Write([]byte("0123456789"))
				time.Sleep(100 * time.Millisecond)
			}
			pw.Close()
		}()
		res, body := do(t, client(t), mustRequest(t, "POST", p.URL("/"), pr))
		if res.StatusCode != 200 || body != "80" {
			t.Errorf("got %d %q, want 200 80", res.StatusCode, body)
		}
	})
}
