// Package redistest runs a real redis-server for tests: [Start] gives a
// test one on a free loopback port, with no persistence, stopped when the
// test ends. Tests that use it run on the real clock, and should bound
// every wait.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binary is the server the tests start; REDIS_SERVER overrides it.
func Binary() string {
	if b := os.Getenv("REDIS_SERVER"); b != "" {
		return b
	}
	return "redis-server"
}

// Installed reports whether the server [Binary] is installed.
func Installed() bool {
	_, err := exec.LookPath(Binary())
	return err == nil
}

// InstallHint is the one line that tells how to get the server.
const InstallHint = "redis-server is not installed: apt-get install redis-server (Debian, Ubuntu) or brew install redis (macOS)"

// A Server is one redis-server process on a loopback port. Its methods
// are safe for concurrent use.
type Server struct {
	addr string
	port int
	dir  string

	mu     sync.Mutex
	cmd    *exec.Cmd     // nil when stopped
	exited chan struct{} // closed when cmd has exited and been reaped
}

// Start starts a redis-server for t and stops it when t ends. It fails t,
// with how to install it, if redis-server is missing, rather than skip.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := StartServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// StartServer starts a redis-server whose files go in dir, for programs
// that are not tests (examples/fleet); the caller stops it.
func StartServer(dir string) (*Server, error) {
	if !Installed() {
		return nil, errors.New(InstallHint)
	}
	var last error
	for range 5 { // someone else may take the free port before the server does
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		s := &Server{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), port: port, dir: dir}
		if last = s.start(); last == nil {
			return s, nil
		}
	}
	return nil, last
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.addr }

// start runs the server on s's port and waits, at most 10 seconds, until
// it answers PING.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &strings.Builder{}
	cmd := exec.Command(Binary(),
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--dir", s.dir, "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--loglevel", "warning")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redistest: start %s: %w", Binary(), err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	timeout := time.After(10 * time.Second)
	for ping(s.addr) != nil {
		select {
		case <-exited:
			return fmt.Errorf("redistest: redis-server on port %d exited: %s", s.port, out.String())
		case <-timeout:
			cmd.Process.Kill()
			<-exited
			return fmt.Errorf("redistest: redis-server on port %d did not answer PING in 10s: %s", s.port, out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	s.cmd, s.exited = cmd, exited
	return nil
}

// ping sends PING on a new connection and reads +PONG, within a second.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err == nil && line != "+PONG\r\n" {
		err = fmt.Errorf("redistest: PING answered %q", line)
	}
	return err
}

// Stop stops the server, with SIGTERM and, after 5 seconds, SIGKILL, and
// waits until it has exited. Stopping a stopped server does nothing.
func (s *Server) Stop() { s.stop(syscall.SIGTERM) }

// Kill stops the server at once with SIGKILL, as a crash would.
func (s *Server) Kill() { s.stop(syscall.SIGKILL) }

func (s *Server) stop(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	cmd := s.cmd
	s.cmd = nil
	cmd.Process.Signal(sig)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-s.exited
	}
}

// Restart starts the server again on the same port, empty (there is no
// persistence), after a Stop or a Kill.
func (s *Server) Restart() error {
	s.Stop()
	return s.start()
}
