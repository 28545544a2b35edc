package proxy_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A backend that refuses connections is 502, one slower than the try
// timeout 504; shed requests are 503 with Retry-After.
func TestErrorStatuses(t *testing.T) {
	t.Run("502 refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead := "http://" + ln.Addr().String()
		ln.Close()
		p := startProxy(t, config([]string{dead}, "", ""))
		if res, body := do(t, client(t), mustRequest(t, "GET", p.URL("/"), nil)); res.StatusCode != http.StatusBadGateway {
			t.Errorf("got %d %q, want 502", res.StatusCode, body)
		}
	})
	t.Run("504 slow", func(t *testing.T) {
		backend := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		})).URL
		p := startProxy(t, config([]string{backend}, "", "timeout: {try: 200ms, overall: 2s}"))
		start := time.Now()
		res, body := do(t, client(t), mustRequest(t, "GET", p.URL("/"), nil))
		if res.StatusCode != http.StatusGatewayTimeout || time.Since(start) > 3*time.Second {
			t.Errorf("got %d %q after %v, want 504 within the overall timeout", res.StatusCode, body, time.Since(start))
		}
	})
	t.Run("503 shed", func(t *testing.T) {
		release := make(chan struct{})
		backend := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-time.After(10 * time.Second):
			}
		})).URL
		// The upstream's limit starts with a probe at a quarter of its
		// initial 100, and nothing may wait for it: of 40 requests held
		// at once, some are shed at once.
		p := startProxy(t, config([]string{backend}, "admission: {queue: 0s}", ""))
		c := client(t)
		var shed, ok atomic.Int64
		var wg sync.WaitGroup
		for range 40 {
			wg.Go(func() {
				res, err := c.Get(p.URL("/"))
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
				switch {
				case res.StatusCode == 503 && res.Header.Get("Retry-After") != "":
					shed.Add(1)
				case res.StatusCode == 200:
					ok.Add(1)
				default:
					t.Errorf("got %d, Retry-After %q; want 200, or 503 with Retry-After", res.StatusCode, res.Header.Get("Retry-After"))
				}
			})
		}
		time.Sleep(time.Second)
		close(release)
		wg.Wait()
		if shed.Load() == 0 || ok.Load() == 0 {
			t.Errorf("got %d shed and %d served, want some of each", shed.Load(), ok.Load())
		}
	})
}

// A client that goes away while its backend works is no failure of the
// backend's: after a dozen cancelled requests on two backends, both still
// take requests (neither is ejected as an outlier, as five failures in a
// row would).
func TestClientGoneIsNoBackendFailure(t *testing.T) {
	var arrived sync.WaitGroup
	var hits [2]atomic.Int64
	var urls []string
	for i := range 2 {
		urls = append(urls, newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			if r.URL.Path == "/held" {
				time.Sleep(200 * time.Millisecond)
			}
			if r.URL.Path == "/slow" {
				arrived.Done()
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
				}
			}
		})).URL)
	}
	// No limit: the 12 requests must all reach the backends.
	p := startProxy(t, config(urls, "admission: {limit: off}", "limit: off"))
	c := client(t)
	ctx, cancel := context.WithCancel(t.Context())
	arrived.Add(12)
	errs := make(chan error, 12)
	for range 12 {
		go func() {
			res, err := c.Do(mustRequest(t, "GET", p.URL("/slow"), nil).WithContext(ctx))
			if err == nil {
				res.Body.Close()
			}
			errs <- err
		}()
	}
	done := make(chan struct{})
	go func() { arrived.Wait(); close(done) }()
	wait(t, done, "12 requests reaching the backends")
	if hits[0].Load() < 5 || hits[1].Load() < 5 {
		t.Fatalf("the backends got %d and %d of the held requests, want 5 or more each", hits[0].Load(), hits[1].Load())
	}
	cancel()
	for range 12 {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want the client's cancellation", err)
		}
	}
	time.Sleep(100 * time.Millisecond) // the proxy sees the cancellations
	// Requests held at the backends, many at once: P2C spreads them by
	// the requests each backend has pending, unless one is ejected. (One
	// at a time, they would all go to the backend whose latency estimate
	// is lower, which tells nothing.)
	before := [2]int64{hits[0].Load(), hits[1].Load()}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			res, err := c.Get(p.URL("/held"))
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			if res.StatusCode != 200 {
				t.Errorf("got %d, want 200", res.StatusCode)
			}
		})
	}
	wg.Wait()
	if hits[0].Load() == before[0] || hits[1].Load() == before[1] {
		t.Errorf("after the cancellations the backends got %d and %d of 20 requests; want both some (neither ejected)",
			hits[0].Load()-before[0], hits[1].Load()-before[1])
	}
}

// abortingBackend sends a status and part of a body, then breaks its
// connection, with a Content-Length or without.
func abortingBackend(t *testing.T) string {
	return newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/length" {
			w.Header().Set("Content-Length", "1000")
		}
		w.Write([]byte(strings.Repeat("x", 100)))
		w.(http.Flusher).Flush()
		time.Sleep(50 * time.Millisecond)
		panic(http.ErrAbortHandler)
	})).URL
}

// A response that has started when its backend fails is aborted: the
// client sees a broken response, never a complete-looking short one nor a
// second status line; over HTTP/2 its stream is reset.
func TestResponseAbortedWhenBackendFailsMidway(t *testing.T) {
	cert, key, pool := writeCert(t)
	p := startProxy(t, config([]string{abortingBackend(t)}, fmt.Sprintf("tls: {cert: %s, key: %s}", cert, key), ""))
	for _, path := range []string{"/length", "/chunked"} {
		t.Run("http1"+path, func(t *testing.T) {
			conn, err := tlsDial(p.Addr, pool)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
			raw, _ := io.ReadAll(conn) // until the proxy closes the connection
			if len(raw) == 0 && path == "/length" {
				// The status and the 100 bytes were still in net/http's
				// buffer, which it drops: the client sees the connection
				// closed without a response.
				return
			}
			res, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(raw))), nil)
			if err != nil {
				t.Fatalf("%v in %q", err, raw)
			}
			body, err := io.ReadAll(res.Body)
			if res.StatusCode != 200 || !errors.Is(err, io.ErrUnexpectedEOF) || len(body) != 100 {
				t.Errorf("got %d, %d bytes, %v; want 200, 100 bytes and io.ErrUnexpectedEOF", res.StatusCode, len(body), err)
			}
			if n := strings.Count(string(raw), "HTTP/1.1 "); n != 1 {
				t.Errorf("got %d status lines in %q, want 1", n, raw)
			}
		})
	}
	t.Run("h2", func(t *testing.T) {
		tr := &http.Transport{TLSClientConfig: tlsConfig(pool), ForceAttemptHTTP2: true}
		t.Cleanup(tr.CloseIdleConnections)
		res, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("https://" + p.Addr + "/chunked")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if res.ProtoMajor != 2 || res.StatusCode != 200 || err == nil || len(body) != 100 {
			t.Errorf("got %s %d, %d bytes, %v; want HTTP/2 200, 100 bytes and the stream's reset", res.Proto, res.StatusCode, len(body), err)
		}
	})
}
