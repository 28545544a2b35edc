package proxy_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Each request forwarded gets a Via entry after the ones it had, with the
// protocol version the client spoke.
func TestVia(t *testing.T) {
	backend := headerBackend(t)
	p := startProxy(t, config([]string{backend}, "h2c: true", ""))
	got, _ := getHeaders(t, p.URL("/"), nil)
	if v := strings.Join(got["Via"], ", "); v != "1.1 towerproxy" {
		t.Errorf("HTTP/1.1: got Via %q, want %q", v, "1.1 towerproxy")
	}
	got, _ = getHeaders(t, p.URL("/"), map[string]string{"Via": "1.0 fred, 1.1 p.example.net"})
	if v := strings.Join(got["Via"], ", "); v != "1.0 fred, 1.1 p.example.net, 1.1 towerproxy" {
		t.Errorf("after others: got Via %q", v)
	}
	res, body := do(t, h2cClient(t), mustRequest(t, "GET", p.URL("/"), nil))
	if res.ProtoMajor != 2 || !strings.Contains(body, `"Via":["2 towerproxy"]`) {
		t.Errorf("HTTP/2: got %s %q, want Via 2 towerproxy", res.Proto, body)
	}
}

// TRACE is refused; an OPTIONS with Max-Forwards 0 is answered by the
// proxy, one with more goes on with one less.
func TestTraceAndMaxForwards(t *testing.T) {
	backend := headerBackend(t)
	p := startProxy(t, config([]string{backend}, "", ""))
	c := client(t)
	res, _ := do(t, c, mustRequest(t, "TRACE", p.URL("/"), nil))
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("TRACE: got %d, want 405", res.StatusCode)
	}
	req := mustRequest(t, "OPTIONS", p.URL("/"), nil)
	req.Header.Set("Max-Forwards", "0")
	res, body := do(t, c, req)
	if res.StatusCode != 200 || body != "" {
		t.Errorf("OPTIONS with Max-Forwards 0: got %d %q, want 200 from the proxy, empty", res.StatusCode, body)
	}
	req = mustRequest(t, "OPTIONS", p.URL("/"), nil)
	req.Header.Set("Max-Forwards", "3")
	res, body = do(t, c, req)
	if res.StatusCode != 200 || !strings.Contains(body, `"Max-Forwards":["2"]`) {
		t.Errorf("OPTIONS with Max-Forwards 3: got %d %q, want the backend's answer with 2", res.StatusCode, body)
	}
}

// CONNECT is refused, whatever its target, with the methods the proxy
// takes: it tunnels to no host a client names.
func TestConnectRefused(t *testing.T) {
	backend := headerBackend(t)
	p := startProxy(t, config([]string{backend}, "", ""))
	for _, line := range []string{"CONNECT example.com:443 HTTP/1.1", "CONNECT " + p.Addr + " HTTP/1.1"} {
		conn, br := dialRaw(t, p.Addr)
		io.WriteString(conn, line+"\r\nHost: x\r\n\r\n")
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		res.Body.Close()
		if allow := res.Header.Get("Allow"); res.StatusCode != http.StatusMethodNotAllowed || allow == "" || strings.Contains(allow, "CONNECT") || strings.Contains(allow, "TRACE") {
			t.Errorf("%s: got %d with Allow %q, want 405 with the methods taken, without CONNECT and TRACE", line, res.StatusCode, allow)
		}
	}
}

// An informational response (103 Early Hints) goes on to the client
// before the final one.
func TestEarlyHintsForwarded(t *testing.T) {
	backend := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload; as=style")
		w.WriteHeader(http.StatusEarlyHints)
		io.WriteString(w, "page")
	})).URL
	p := startProxy(t, config([]string{backend}, "", ""))
	conn, br := dialRaw(t, p.Addr)
	io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusEarlyHints || res.Header.Get("Link") == "" {
		t.Fatalf("got %d %v first, want 103 with its Link", res.StatusCode, res.Header)
	}
	res, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || string(b) != "page" {
		t.Errorf("then got %d %q, want 200 page", res.StatusCode, b)
	}
}

// An HTTP/1.0 client gets the final response alone: HTTP/1.0 has no
// informational responses, and a server must not send it one.
func TestNoEarlyHintsToHTTP10(t *testing.T) {
	backend := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload; as=style")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		io.WriteString(w, "page")
	})).URL
	p := startProxy(t, config([]string{backend}, "", ""))
	conn, br := dialRaw(t, p.Addr)
	io.WriteString(conn, "GET / HTTP/1.0\r\nHost: x\r\n\r\n")
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || string(b) != "page" || res.Header.Get("Link") != "" {
		t.Errorf("got %d %q with Link %q first, want 200 page, without the hints", res.StatusCode, b, res.Header.Get("Link"))
	}
}

// A backend's field name with spaces before its colon reaches the client
// without them (RFC 9112, 5.1): net/http's parser kept them in the name,
// and its server then dropped the field.
func TestResponseNameSpacesRemoved(t *testing.T) {
	backend := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 200 OK\r\nX-A : b\r\nx-a: c\r\nContent-Length: 2\r\n\r\nok")
		brw.Flush()
	})).URL
	p := startProxy(t, config([]string{backend}, "", ""))
	res, body := do(t, client(t), mustRequest(t, "GET", p.URL("/"), nil))
	got := slices.Sorted(slices.Values(res.Header.Values("X-A")))
	if res.StatusCode != 200 || body != "ok" || !slices.Equal(got, []string{"b", "c"}) {
		t.Fatalf("got %d %q with X-A %q, want 200 ok with X-A b and c", res.StatusCode, body, got)
	}
}
