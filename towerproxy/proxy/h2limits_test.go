package proxy_test

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// h2cClient returns a client that speaks HTTP/2 without TLS.
func h2cClient(t *testing.T) *http.Client {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// The client limits hold on HTTP/2 too: a header over max_header_bytes is
// refused, a body over max_body_bytes is 413, a stalled body is 408 (the
// deadline is the stream's), and a slow but steady one is served.
func TestLimitsOverHTTP2(t *testing.T) {
	backend, n := bodyBackend(t)
	p := startProxy(t, config([]string{backend}, "h2c: true\nserver: {max_header_bytes: 1KiB, max_body_bytes: 1KiB, body_timeout: 300ms}", ""))
	c := h2cClient(t)

	req := mustRequest(t, "GET", p.URL("/"), nil)
	req.Header.Set("X-Big", strings.Repeat("x", 8<<10))
	if res, err := c.Do(req); err == nil {
		res.Body.Close()
		if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("a large header: got %s %d, want 431 or the request refused", res.Proto, res.StatusCode)
		}
	}
	if n.Load() != 0 {
		t.Errorf("a large header reached the backend")
	}

	res, _ := do(t, c, mustRequest(t, "POST", p.URL("/"), io.MultiReader(strings.NewReader(strings.Repeat("x", 2048)))))
	if res.ProtoMajor != 2 || res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a large body: got %s %d, want HTTP/2 413", res.Proto, res.StatusCode)
	}

	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte("0123456789")) // and then nothing
	res, _ = do(t, c, mustRequest(t, "POST", p.URL("/"), pr))
	if res.StatusCode != http.StatusRequestTimeout {
		t.Errorf("a stalled body: got %d, want 408", res.StatusCode)
	}

	pr, pw = io.Pipe()
	go func() {
		for range 8 {
			pw.Write([]byte("0123456789"))
			time.Sleep(100 * time.Millisecond)
		}
		pw.Close()
	}()
	res, body := do(t, c, mustRequest(t, "POST", p.URL("/"), pr))
	if res.StatusCode != 200 || body != "80" {
		t.Errorf("a slow but steady body: got %d %q, want 200 80", res.StatusCode, body)
	}
}

// A request with Expect: 100-continue gets one 100 Continue, then its
// answer, with its body forwarded.
func TestExpectContinue(t *testing.T) {
	backend, _ := bodyBackend(t)
	p := startProxy(t, config([]string{backend}, "", ""))
	conn, br := dialRaw(t, p.Addr)
	io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
	line, err := br.ReadString('\n')
	if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("got %q, %v; want 100 Continue", line, err)
	}
	for line != "\r\n" {
		if line, err = br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	io.WriteString(conn, "hello")
	res, err := http.ReadResponse(bufio.NewReader(br), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || string(b) != "5" {
		t.Errorf("got %d %q, want 200 and the 5 bytes forwarded", res.StatusCode, b)
	}
}
