package redistest

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// peer listens on a loopback port and answers the first line of every
// connection with reply, then closes it; an empty reply closes it with no
// answer.
func peer(t *testing.T, reply string) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			bufio.NewReader(c).ReadString('\n')
			c.Write([]byte(reply))
			c.Close()
		}
	}()
	return l
}

// A server is ready only when it answers PING with PONG: one that is
// still loading its data, or a peer that closes the connection, is not.
func TestPingWantsPong(t *testing.T) {
	loading := peer(t, "-LOADING Redis is loading the dataset in memory\r\n")
	if err := ping(loading.Addr().String()); err == nil || !strings.Contains(err.Error(), "LOADING") {
		t.Errorf("ping of a loading server: %v, want an error that quotes its answer", err)
	}
	closing := peer(t, "")
	if err := ping(closing.Addr().String()); !errors.Is(err, io.EOF) {
		t.Errorf("ping of a peer that closes: %v, want io.EOF", err)
	}
}

// A server that cannot bind its port exits, and start says so with its
// output, rather than polling until the deadline.
func TestStartReportsExit(t *testing.T) {
	busy := peer(t, "-ERR not redis\r\n")
	port := busy.Addr().(*net.TCPAddr).Port
	s := &Server{addr: busy.Addr().String(), port: port, dir: t.TempDir()}
	begin := time.Now()
	err := s.start()
	if err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("start on a port in use: %v, want an error saying the server exited", err)
	}
	if d := time.Since(begin); d >= 5*time.Second {
		t.Errorf("start took %v to see the exit, want well under its 10s deadline", d)
	}
}

// command sends one inline command to the server at addr and returns its
// reply's first line.
func command(t *testing.T, addr string, args ...string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte(strings.Join(args, " ") + "\r\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(line, "\r\n")
}

// Restart of a running server stops it first, and the server comes back
// on the same port, empty.
func TestRestartRunning(t *testing.T) {
	s := Start(t)
	if got := command(t, s.Addr(), "SET", "k", "v"); got != "+OK" {
		t.Fatalf("SET: %q", got)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if got := s.Addr(); got != "127.0.0.1:"+strconv.Itoa(s.port) {
		t.Errorf("address %s after restart, want port %d", got, s.port)
	}
	if got := command(t, s.Addr(), "GET", "k"); got != "$-1" {
		t.Errorf("GET after restart: %q, want $-1 (no key)", got)
	}
}
