package proxy_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Request smuggling needs two parsers that disagree on where a request
// ends. The proxy's parser is net/http's; what it rejects, and what it
// accepts and forwards framed anew (the transport writes its own
// Content-Length or chunks), is checked here on raw connections. What
// net/http removes before the handler runs, and the proxy makes up for
// by closing the connection (see mustClose), is in
// TestSmugglingEndsTheConnection.

// seen is what the smuggling backend saw of one request.
type seen struct {
	Path, Body string
	CL         int64
	TE         []string
	Header     http.Header
}

// smugglingBackend records each request it gets, and answers it.
func smugglingBackend(t *testing.T) (string, func() []seen) {
	var mu sync.Mutex
	var got []seen
	url := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		mu.Lock()
		got = append(got, seen{r.URL.Path, string(b), r.ContentLength, r.TransferEncoding, r.Header})
		mu.Unlock()
		json.NewEncoder(w).Encode(got[len(got)-1])
	})).URL
	return url, func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), got...)
	}
}

func TestRequestSmuggling(t *testing.T) {
	backend, requests := smugglingBackend(t)
	p := startProxy(t, config([]string{backend}, "", ""))
	for _, c := range []struct {
		name, raw string
		statuses  []int  // of the responses on the connection, in order
		paths     string // the paths the backend got, in order
		check     func(t *testing.T, got []seen)
	}{
		{"CL and TE: TE wins, the backend gets the chunked body framed anew without CL",
			"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
			[]int{200}, "/a", func(t *testing.T, got []seen) {
				if got[0].Body != "hello" || got[0].Header.Get("Content-Length") != "" {
					t.Errorf("the backend got %+v, want the body hello and no Content-Length header", got[0])
				}
			}},
		{"two Content-Lengths", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", []int{400}, "", nil},
		{"a Content-Length list", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 5\r\n\r\nhello", []int{400}, "", nil},
		{"a signed Content-Length", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\nhello", []int{400}, "", nil},
		{"a negative Content-Length", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", []int{400}, "", nil},
		{"chunked, then identity", "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n5\r\nhello\r\n0\r\n\r\n", []int{501}, "", nil},
		{"an unknown coding", "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", []int{501}, "", nil},
		{"two Transfer-Encodings", "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", []int{501}, "", nil},
		{"a space before the colon", "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", []int{400}, "", nil},
		{"a bare CR in a value", "GET /a HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", []int{400}, "", nil},
		{"a NUL in a value", "GET /a HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", []int{400}, "", nil},
		{"two Hosts", "GET /a HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", []int{400}, "", nil},
		{"no Host", "GET /a HTTP/1.1\r\n\r\n", []int{400}, "", nil},
		{"a fragment in the target", "GET /a#b HTTP/1.1\r\nHost: x\r\n\r\n", []int{400}, "", nil},
		{"a fragment in an absolute target", "GET http://x/a#b HTTP/1.1\r\nHost: x\r\n\r\n", []int{400}, "", nil},
		{"a bad chunk size", "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", []int{400}, "", nil},
		{"chunks ended by bare LFs", "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\n0\n\n", []int{400}, "", nil},
		{"obs-fold: replaced by a space", "GET /a HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  folded\r\n\r\n",
			[]int{200}, "/a", func(t *testing.T, got []seen) {
				if v := got[0].Header.Get("X-A"); v != "1 folded" {
					t.Errorf("the backend got X-A %q, want %q", v, "1 folded")
				}
			}},
		{"pipelined requests, each forwarded on its own", "GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
			[]int{200, 200, 200}, "/a /b /c", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(requests())
			conn, br := dialRaw(t, p.Addr)
			io.WriteString(conn, c.raw)
			var statuses []int
			for {
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					break
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				statuses = append(statuses, res.StatusCode)
				if res.Close || len(statuses) == len(c.statuses) {
					break
				}
			}
			if !equal(statuses, c.statuses) {
				t.Fatalf("got statuses %v, want %v", statuses, c.statuses)
			}
			got := requests()[before:]
			var paths []string
			for _, s := range got {
				paths = append(paths, s.Path)
			}
			if strings.Join(paths, " ") != c.paths {
				t.Fatalf("the backend got %q, want %q", paths, c.paths)
			}
			if c.check != nil {
				c.check(t, got)
			}
		})
	}
}

// net/http's server removes a Content-Length that comes beside
// Transfer-Encoding: chunked, and ignores and removes an HTTP/1.0
// request's Transfer-Encoding, before the handler runs. Behind a front
// proxy that framed such a request otherwise, what follows it on the
// connection could be another client's request, or one smuggled in its
// body. So the proxy answers it, then closes the connection (RFC 9112,
// 6.1): the request that follows is never read. Without mustClose, the
// backend got the smuggled request and the connection stayed open.
func TestSmugglingEndsTheConnection(t *testing.T) {
	backend, requests := smugglingBackend(t)
	p := startProxy(t, config([]string{backend}, "", ""))
	for _, c := range []struct{ name, raw, body string }{
		{"CL.TE: the chunked body, then a request",
			"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 30\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
			"hello"},
		{"HTTP/1.0 with Transfer-Encoding: a request for a body",
			"POST /a HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
			""},
		{"HTTP/1.0 kept alive, with a Content-Length",
			"POST /a HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\nContent-Length: 5\r\n\r\nhelloGET /next HTTP/1.0\r\nHost: x\r\n\r\n",
			"hello"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(requests())
			conn, br := dialRaw(t, p.Addr)
			io.WriteString(conn, c.raw)
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || !res.Close {
				t.Errorf("got %d, Connection %q; want 200 and close", res.StatusCode, res.Header.Get("Connection"))
			}
			if _, closed := closedWithin(br, 5*time.Second); !closed {
				t.Fatal("the connection stayed open")
			}
			got := requests()[before:]
			if len(got) != 1 || got[0].Path != "/a" || got[0].Body != c.body {
				t.Fatalf("the backend got %+v, want /a alone with body %q", got, c.body)
			}
		})
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A client whose body breaks off or is malformed gets 400, and the
// backend it was on its way to is not blamed: after a dozen of them on
// two backends, both still take requests.
func TestBrokenBodyIsNoBackendFailure(t *testing.T) {
	var hits [2]atomic.Int64
	var urls []string
	for i := range 2 {
		urls = append(urls, newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			io.Copy(io.Discard, r.Body)
			time.Sleep(200 * time.Millisecond)
		})).URL)
	}
	p := startProxy(t, config(urls, "admission: {limit: off}", "limit: off"))
	var wg sync.WaitGroup
	for range 12 {
		wg.Go(func() {
			conn, br := dialRaw(t, p.Addr)
			io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
			time.Sleep(100 * time.Millisecond) // on its way to a backend
			io.WriteString(conn, "zz\r\n")
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			if res.StatusCode != http.StatusBadRequest {
				t.Errorf("got %d, want 400", res.StatusCode)
			}
		})
	}
	wg.Wait()
	if hits[0].Load() < 5 || hits[1].Load() < 5 {
		t.Fatalf("the backends got %d and %d of the broken requests, want 5 or more each", hits[0].Load(), hits[1].Load())
	}
	before := [2]int64{hits[0].Load(), hits[1].Load()}
	c := client(t)
	for range 20 {
		wg.Go(func() {
			res, err := c.Get(p.URL("/"))
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
		})
	}
	wg.Wait()
	if hits[0].Load() == before[0] || hits[1].Load() == before[1] {
		t.Errorf("after the broken bodies the backends got %d and %d of 20 requests; want both some (neither ejected)",
			hits[0].Load()-before[0], hits[1].Load()-before[1])
	}
}
