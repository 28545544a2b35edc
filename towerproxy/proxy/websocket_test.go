package proxy_test

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A minimal WebSocket (RFC 6455): the handshake's accept key, and frames
// of up to 64KiB, masked from the client, not from the server.

const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

func wsAccept(key string) string {
	h := sha1.Sum([]byte(key + wsGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

const (
	wsText  = 0x1
	wsClose = 0x8
)

// writeFrame writes one final frame of op with payload, masked if mask.
func writeFrame(w io.Writer, op byte, payload []byte, mask bool) error {
	hdr := []byte{0x80 | op, 0}
	switch n := len(payload); {
	case n < 126:
		hdr[1] = byte(n)
	default:
		hdr[1] = 126
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(n))
	}
	body := payload
	if mask {
		hdr[1] |= 0x80
		var key [4]byte
		rand.Read(key[:])
		hdr = append(hdr, key[:]...)
		body = make([]byte, len(payload))
		for i := range payload {
			body[i] = payload[i] ^ key[i%4]
		}
	}
	_, err := w.Write(append(hdr, body...))
	return err
}

// readFrame reads one frame, and unmasks it if it is masked.
func readFrame(r io.Reader) (op byte, payload []byte, masked bool, err error) {
	var hdr [2]byte
	if _, err = io.ReadFull(r, hdr[:]); err != nil {
		return
	}
	op, masked = hdr[0]&0x0f, hdr[1]&0x80 != 0
	n := int(hdr[1] & 0x7f)
	if n == 126 {
		var ext [2]byte
		if _, err = io.ReadFull(r, ext[:]); err != nil {
			return
		}
		n = int(binary.BigEndian.Uint16(ext[:]))
	}
	var key [4]byte
	if masked {
		if _, err = io.ReadFull(r, key[:]); err != nil {
			return
		}
	}
	payload = make([]byte, n)
	if _, err = io.ReadFull(r, payload); err != nil {
		return
	}
	if masked {
		for i := range payload {
			payload[i] ^= key[i%4]
		}
	}
	return
}

// wsBackend is a WebSocket server: it greets, answers each text frame
// with "echo: " and the text, and answers a close with a close.
func wsBackend(t *testing.T) string {
	return newBackend(t, http.HandlerFunc(wsServe)).URL
}

// wsServe is wsBackend's handler.
func wsServe(w http.ResponseWriter, r *http.Request) {
	{
		if r.Header.Get("Upgrade") != "websocket" || r.Header.Get("Sec-WebSocket-Key") == "" {
			http.Error(w, "not a WebSocket handshake", http.StatusBadRequest)
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
			wsAccept(r.Header.Get("Sec-WebSocket-Key")))
		writeFrame(brw, wsText, []byte("hello from "+r.Header.Get("X-Forwarded-For")), false)
		brw.Flush()
		for {
			op, msg, masked, err := readFrame(brw)
			if err != nil || !masked {
				return // a client's frames must be masked
			}
			if op == wsClose {
				writeFrame(brw, wsClose, msg, false)
				brw.Flush()
				return
			}
			writeFrame(brw, wsText, append([]byte("echo: "), msg...), false)
			brw.Flush()
		}
	}
}

// A WebSocket goes through the proxy: the handshake reaches the backend
// with its Upgrade, the 101 and its accept key come back, and frames go
// both ways, many of them, until a close, on one connection.
func TestWebSocketTunnelled(t *testing.T) {
	p := startProxy(t, config([]string{wsBackend(t)}, "", ""))
	conn, err := net.DialTimeout("tcp", p.Addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	key := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef"))
	fmt.Fprintf(conn, "GET /chat HTTP/1.1\r\nHost: chat.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", key)
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols || res.Header.Get("Upgrade") != "websocket" || res.Header.Get("Sec-WebSocket-Accept") != wsAccept(key) {
		t.Fatalf("got %d, Upgrade %q, accept %q; want 101 websocket %q", res.StatusCode, res.Header.Get("Upgrade"), res.Header.Get("Sec-WebSocket-Accept"), wsAccept(key))
	}
	op, msg, masked, err := readFrame(br)
	if err != nil || op != wsText || masked || string(msg) != "hello from 127.0.0.1" {
		t.Fatalf("got the greeting %x %q masked %v, %v; want text %q unmasked", op, msg, masked, err, "hello from 127.0.0.1")
	}
	for i := range 50 {
		text := fmt.Sprintf("message %d %s", i, make([]byte, i*100))
		if err := writeFrame(conn, wsText, []byte(text), true); err != nil {
			t.Fatal(err)
		}
		op, msg, _, err := readFrame(br)
		if err != nil || op != wsText || string(msg) != "echo: "+text {
			t.Fatalf("message %d: got %x %.40q, %v; want the echo", i, op, msg, err)
		}
	}
	if err := writeFrame(conn, wsClose, []byte{0x03, 0xe8}, true); err != nil {
		t.Fatal(err)
	}
	if op, _, _, err := readFrame(br); err != nil || op != wsClose {
		t.Fatalf("got %x, %v; want the close frame", op, err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after the close: got %v, want EOF: the proxy closes the client's connection when the backend closes its own", err)
	}
}

// An Upgrade that the backend refuses is an ordinary response: the
// client gets the backend's answer, and its connection stays usable.
func TestUpgradeRefused(t *testing.T) {
	p := startProxy(t, config([]string{wsBackend(t)}, "", ""))
	conn, err := net.DialTimeout("tcp", p.Addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	for _, want := range []int{400, 400} {
		fmt.Fprint(conn, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("got %d, want %d", res.StatusCode, want)
		}
	}
}

// An Upgrade to an upstream that speaks HTTP/2 (h2c), which has no
// Upgrade, is answered 501 by the proxy, and never reaches a backend.
func TestUpgradeToH2CUpstream(t *testing.T) {
	backend, n := bodyBackend(t)
	p := startProxy(t, config([]string{backend}, "", "protocol: h2c"))
	conn, br := dialRaw(t, p.Addr)
	io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotImplemented || n.Load() != 0 {
		t.Errorf("got %d, the backend reached %d times; want 501 and none", res.StatusCode, n.Load())
	}
}

// Two Upgrades are not passed on: a backend that would take them never
// sees them, and the request is answered as an ordinary one. One to h2c
// (h2c smuggling would tunnel HTTP/2 past the proxy's routes and limits),
// and any in an HTTP/1.0 request, which must be ignored (RFC 9110,
// section 7.8).
func TestUpgradeNotPassedOn(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef"))
	for _, tt := range []struct{ name, upgrade, request string }{
		{"h2c", "h2c", "GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n"},
		{"http1.0", "websocket", "GET / HTTP/1.0\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: " + key + "\r\n\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var upgrades atomic.Int64
			backend := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Upgrade") != "" {
					upgrades.Add(1)
					w.Header().Set("Connection", "Upgrade")
					w.Header().Set("Upgrade", tt.upgrade)
					w.WriteHeader(http.StatusSwitchingProtocols)
					return
				}
				io.WriteString(w, "plain")
			})).URL
			p := startProxy(t, config([]string{backend}, "", ""))
			conn, br := dialRaw(t, p.Addr)
			io.WriteString(conn, tt.request)
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != 200 || string(body) != "plain" || upgrades.Load() != 0 {
				t.Errorf("got %d %q, the backend saw %d upgrades; want 200 plain and none", res.StatusCode, body, upgrades.Load())
			}
		})
	}
}

// A handshake counts in its route's rate limit as any request does: with
// a burst of one a minute, a client's second WebSocket is refused 429,
// with the Retry-After of its next token, and never reaches the backend;
// its first, already a tunnel, goes on.
func TestUpgradeRateLimited(t *testing.T) {
	var handshakes atomic.Int64
	counted := newBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handshakes.Add(1)
		wsServe(w, r)
	}))
	p := start(t, `
routes:
  - upstream: u
    rate_limit: {key: client_ip, rate: 1/m, burst: 1}
upstreams:
  u: {backends: [%s]}
`, counted.URL)
	handshake := func() (net.Conn, *bufio.Reader, *http.Response) {
		conn, err := net.DialTimeout("tcp", strings.TrimPrefix(p.URL, "http://"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprint(conn, "GET /chat HTTP/1.1\r\nHost: chat.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: MDEyMzQ1Njc4OWFiY2RlZg==\r\nSec-WebSocket-Version: 13\r\n\r\n")
		br := bufio.NewReader(conn)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		return conn, br, res
	}
	conn, br, first := handshake()
	if first.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("1st handshake: got %d, want 101", first.StatusCode)
	}
	if _, _, second := handshake(); second.StatusCode != http.StatusTooManyRequests || second.Header.Get("Retry-After") != "60" {
		t.Errorf("2nd handshake: got %d, Retry-After %q; want 429, 60", second.StatusCode, second.Header.Get("Retry-After"))
	}
	if n := handshakes.Load(); n != 1 {
		t.Errorf("the backend got %d handshakes, want 1", n)
	}
	if _, _, _, err := readFrame(br); err != nil {
		t.Fatalf("the greeting: %v", err)
	}
	if err := writeFrame(conn, wsText, []byte("still here"), true); err != nil {
		t.Fatal(err)
	}
	if _, msg, _, err := readFrame(br); err != nil || string(msg) != "echo: still here" {
		t.Errorf("the first tunnel: got %q, %v; want the echo", msg, err)
	}
}
