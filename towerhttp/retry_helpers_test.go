package towerhttp_test

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/towergo/tower/towerhttp"
)

// memListener is a net.Listener in memory, made of net.Pipe connections,
// so that a real http.Server and a real http.Transport talk to each other
// inside a synctest bubble, where sockets do not work.
type memListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr{} }

// dial is the DialContext of a client's transport.
func (l *memListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "mem" }

// memServer serves h on an in-memory network and returns a client whose
// Transport runs stack over a real http.Transport that dials it, and the
// base's response tracker. Everything is closed when the test ends. Call
// it inside a synctest bubble; requests go to "http://mem/".
func memServer(t *testing.T, h http.Handler, stack clientLayer) (*http.Client, *bodyTracker) {
	t.Helper()
	l := newMemListener()
	srv := &http.Server{Handler: h, ErrorLog: discardLog}
	go srv.Serve(l)
	base := &http.Transport{DialContext: l.dial}
	bt := &bodyTracker{base: base}
	tr := towerhttp.NewTransport(bt, stack)
	t.Cleanup(func() {
		tr.Close()
		base.CloseIdleConnections()
		srv.Close()
	})
	return &http.Client{Transport: tr}, bt
}

// script is a handler that answers the requests it gets in turn with the
// answers given, the last one for every request after, and records when
// each request came, what body it carried, and on which connection.
type script struct {
	answers []reply

	mu    sync.Mutex
	times []time.Duration // since start
	body  []string
	conns map[string]bool
	start time.Time
}

// A reply is a status, with a Retry-After header unless it is "".
type reply struct {
	code       int
	retryAfter string
}

func newScript(answers ...reply) *script {
	return &script{answers: answers, conns: make(map[string]bool), start: time.Now()}
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b := make([]byte, 64)
	n, _ := r.Body.Read(b)
	s.mu.Lock()
	i := min(len(s.times), len(s.answers)-1)
	s.times = append(s.times, time.Since(s.start))
	s.body = append(s.body, string(b[:n]))
	s.conns[r.RemoteAddr] = true
	s.mu.Unlock()
	a := s.answers[i]
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	w.WriteHeader(a.code)
	w.Write([]byte("answer"))
}

func (s *script) attempts() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.times...)
}

func (s *script) bodies() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.body...)
}

// connections returns the number of connections requests came on.
func (s *script) connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// countingBase is a RoundTripper that counts the requests it is given.
type countingBase struct {
	base http.RoundTripper
	n    atomic.Int32
}

func (c *countingBase) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(req)
}
