package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// The generator's connection reads the status and the backend of each
// answer, keeps the connection alive, sends a request again once on a new
// connection when the server closed the idle one, and follows
// Connection: close.
func TestConn(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/fail":
			w.Header().Set("X-Backend", "2")
			http.Error(w, "failing", http.StatusServiceUnavailable)
		case "/close":
			w.Header().Set("Connection", "close")
			w.Write([]byte("bye\n"))
		default:
			w.Header().Set("X-Backend", "1")
			w.Write([]byte("ok\n"))
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	c := newConn(srv.URL+"/", time.Second)
	defer c.close()
	check := func(name string, s sample, status, backend int, wantConns int32) {
		t.Helper()
		if s.status != status || s.backend != backend || conns.Load() != wantConns {
			t.Errorf("%s: got status %d, backend %d, %d connections; want %d, %d, %d", name, s.status, s.backend, conns.Load(), status, backend, wantConns)
		}
	}
	check("first", c.get(time.Now()), 200, 1, 1)
	check("kept alive", c.get(time.Now()), 200, 1, 1)
	srv.CloseClientConnections()
	check("after the server closed it", c.get(time.Now()), 200, 1, 2)

	f := newConn(srv.URL+"/fail", time.Second)
	defer f.close()
	s := f.get(time.Now())
	check("503", s, 503, 2, 3)
	if s.why != "503 failing" {
		t.Errorf("why: got %q, want %q", s.why, "503 failing")
	}

	cl := newConn(srv.URL+"/close", time.Second)
	defer cl.close()
	check("Connection: close", cl.get(time.Now()), 200, -1, 4)
	if cl.c != nil {
		t.Error("the connection is kept after Connection: close")
	}
	check("a new connection after it", cl.get(time.Now()), 200, -1, 5)
}

// A server that does not answer in time is a failure, and not sent again.
func TestConnTimeout(t *testing.T) {
	var requests atomic.Int32
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		<-block
	}))
	defer srv.Close()
	defer close(block)
	c := newConn(srv.URL+"/", 50*time.Millisecond)
	defer c.close()
	c.get(time.Now()) // times out too, on a connection of its own
	s := c.get(time.Now())
	if s.status != 0 || s.why != "no answer: timeout" || requests.Load() != 2 {
		t.Errorf("got status %d (%s) after %d requests, want 0 (no answer: timeout) after 2", s.status, s.why, requests.Load())
	}
}

func TestFirstLine(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>", "502 Bad Gateway"},
		{"<html><body><h1>503 Service Unavailable</h1>\nNo server is available", "503 Service Unavailable"},
		{"service overloaded\n", "service overloaded"},
		{"", ""},
	} {
		if got := firstLine([]byte(tt.body)); got != tt.want {
			t.Errorf("firstLine(%q): got %q, want %q", tt.body, got, tt.want)
		}
	}
}
