package demo

import (
	"context"
	"math/rand/v2"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// A backend is one of the demo's servers on loopback: a pool of workers
// that each serve one request at a time in its service time, first come
// first served, and that may answer 503 to a share of the requests.
type backend struct {
	name    string
	workers chan struct{}
	service time.Duration
	fail    float64 // share of requests answered 503
	srv     *http.Server
	addr    string
	served  atomic.Int64 // requests that got a worker
}

// kind is what one of the demo's backends is like.
type kind struct {
	name    string
	workers int
	service time.Duration
	fail    float64
}

// kinds are the demo's backends: two healthy, one slow, one that fails
// half its requests.
var kinds = []kind{
	{"healthy-1", 4, 10 * time.Millisecond, 0},
	{"healthy-2", 4, 10 * time.Millisecond, 0},
	{"slow", 4, 200 * time.Millisecond, 0},
	{"failing", 4, 10 * time.Millisecond, 0.5},
}

// capacity is the requests a second the backends of kinds answer with
// 2xx at most.
func capacity() int {
	c := 0.0
	for _, k := range kinds {
		c += float64(k.workers) * float64(time.Second) / float64(k.service) * (1 - k.fail)
	}
	return int(c)
}

// startBackend starts a backend of k on a loopback port.
func startBackend(k kind) (*backend, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &backend{name: k.name, workers: make(chan struct{}, k.workers), service: k.service, fail: k.fail, addr: ln.Addr().String()}
	b.srv = &http.Server{Handler: b, ReadHeaderTimeout: 5 * time.Second}
	go b.srv.Serve(ln)
	return b, nil
}

// ServeHTTP waits for a worker, as long as the client does, and serves.
func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case b.workers <- struct{}{}:
	case <-r.Context().Done():
		return
	}
	b.served.Add(1)
	t := time.NewTimer(b.service)
	select {
	case <-t.C:
	case <-r.Context().Done():
		t.Stop()
	}
	<-b.workers
	w.Header().Set("X-Backend", b.name)
	if b.fail > 0 && rand.Float64() < b.fail {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	w.Write([]byte("ok\n"))
}

func (b *backend) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	b.srv.Shutdown(ctx)
}
