package proxy_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// wait waits for ch, failing the test after 10s.
func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not happen within 10s", what)
	}
}

// Server-sent events arrive as they are sent: the client reads the first
// event while the backend holds the second until the client has it, over
// HTTP/1.1 and over HTTP/2.
func TestServerSentEventsFlushed(t *testing.T) {
	cert, key, pool := writeCert(t)
	next := make(chan struct{})
	backend := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 1; i <= 3; i++ {
			fmt.Fprintf(w, "id: %d\ndata: event %d\n\n", i, i)
			w.(http.Flusher).Flush()
			select {
			case <-next:
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Second):
				return
			}
		}
	})).URL
	p := startProxy(t, config([]string{backend}, fmt.Sprintf("tls: {cert: %s, key: %s}", cert, key), ""))
	for _, h2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("h2 %v", h2), func(t *testing.T) {
			tr := &http.Transport{TLSClientConfig: tlsConfig(pool), ForceAttemptHTTP2: h2}
			t.Cleanup(tr.CloseIdleConnections)
			res, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(mustRequest(t, "GET", "https://"+p.Addr+"/events", nil))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.ProtoAtLeast(2, 0) != h2 {
				t.Fatalf("got %s", res.Proto)
			}
			br := bufio.NewReader(res.Body)
			for i := 1; i <= 3; i++ {
				event := readEvent(t, br)
				if want := fmt.Sprintf("id: %d\ndata: event %d\n", i, i); event != want {
					t.Fatalf("got event %q, want %q", event, want)
				}
				next <- struct{}{} // the backend sends the next one only now
			}
		})
	}
}

// readEvent reads one event, up to its blank line.
func readEvent(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	var event string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading an event: %v (so far %q)", err, event)
		}
		if line == "\n" {
			return event
		}
		event += line
	}
}

// A chunked request body is streamed to the backend: the backend reads
// the first chunk while the client holds the second until the backend
// has it.
func TestRequestBodyStreamed(t *testing.T) {
	got := make(chan struct{})
	backend := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 5)
		if _, err := io.ReadFull(r.Body, buf); err != nil || string(buf) != "first" {
			http.Error(w, fmt.Sprintf("got %q, %v", buf, err), 400)
			return
		}
		close(got)
		rest, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s", buf, rest)
	})).URL
	p := startProxy(t, config([]string{backend}, "", ""))
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte("first"))
		select {
		case <-got:
			pw.Write([]byte("second"))
			pw.Close()
		case <-time.After(10 * time.Second):
			pw.CloseWithError(fmt.Errorf("the backend did not get the first chunk within 10s"))
		}
	}()
	res, body := do(t, client(t), mustRequest(t, "POST", p.URL("/upload"), pr))
	if res.StatusCode != 200 || body != "first second" {
		t.Errorf("got %d %q, want 200 %q", res.StatusCode, body, "first second")
	}
}
