package towerhttp_test

import (
	"bufio"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/towerhttp"
)

// echoUpgrade is a backend that switches to the "echo" protocol, in which
// it sends back each line it reads.
var echoUpgrade = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Upgrade") != "echo" {
		http.Error(w, "want Upgrade: echo", http.StatusBadRequest)
		return
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	brw.Flush()
	for {
		line, err := brw.ReadString('\n')
		if err != nil {
			return
		}
		brw.WriteString(line)
		brw.Flush()
	}
})

// A 101 Switching Protocols through a BalancedTransport, with a retry and
// timeouts in its stacks, keeps a body that can be written to, as
// httputil.ReverseProxy needs for a tunnel, and lines go both ways. The
// endpoint's load counts the handshake only: a tunnel held open for a
// second and then closed leaves a load estimate of the handshake's
// milliseconds, not of the second.
func TestBalancedTransportUpgrade(t *testing.T) {
	checkGoroutines(t)
	srv := newServer(t, echoUpgrade)
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	ep := towerhttp.NewEndpoint(base, mustParse(t, srv.URL), towerhttp.ClientStack().Timeout(5*time.Second))
	tr := towerhttp.NewBalancedTransport(discover.NewList(ep),
		towerhttp.ClientStack().Timeout(5*time.Second).RetryPolicy(towerhttp.NewRetryPolicy()))
	t.Cleanup(func() { tr.Close() })

	req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://backend.invalid/ws", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "echo")
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("got status %d, want 101", res.StatusCode)
	}
	conn, ok := res.Body.(io.ReadWriteCloser)
	if !ok {
		t.Fatalf("got a body of type %T, want an io.ReadWriteCloser", res.Body)
	}
	br := bufio.NewReader(conn)
	for _, msg := range []string{"one\n", "two\n"} {
		if _, err := io.WriteString(conn, msg); err != nil {
			t.Fatal(err)
		}
		got, err := br.ReadString('\n')
		if err != nil || got != msg {
			t.Fatalf("got %q, %v, want %q", got, err, msg)
		}
	}
	time.Sleep(time.Second)
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if l := time.Duration(ep.Load()); l >= 500*time.Millisecond {
		t.Errorf("got a load of %v after a tunnel of 1s, want the handshake's (under 500ms)", l)
	}
}
