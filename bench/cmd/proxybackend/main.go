// Proxybackend is one backend of the proxy benchmark (bench/proxy): an
// HTTP server on loopback that answers every request after a fixed
// latency, with a pool of workers beyond which requests queue, and a
// share of fast 503s.
//
//	proxybackend -listen 127.0.0.1:9001 -id 0 -latency 10ms -workers 4 -fail 0.5
//
// Every answer carries X-Backend: <id>, so that the load generator can
// tell which backend answered through any proxy. POST /_ctl changes the
// backend while it runs, from the benchmark's side, never through a
// proxy: ?workers=N resizes the pool (fewer workers take effect as the
// workers in use finish), ?latency=D and ?fail=F change the others.
// Killing the process is how a backend dies; starting it again on the
// same address is how it comes back.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:9001", "the address to serve on")
	id := flag.Int("id", 0, "the backend's number, sent back in X-Backend")
	latency := flag.Duration("latency", 0, "how long each request is served for")
	workers := flag.Int("workers", 0, "how many requests are served at once; more queue (0: no bound)")
	fail := flag.Float64("fail", 0, "the share of requests answered 503 at once, 0 to 1")
	flag.Parse()
	b := newBackend(*id, *latency, *workers, *fail)
	srv := &http.Server{Addr: *listen, Handler: b, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "proxybackend:", err)
		os.Exit(1)
	}
}

// backend serves the requests. Its pool is a channel of tokens sized for
// the most workers it may ever have; the tokens it does not have are held
// by the backend itself, so that resizing is taking or giving back tokens.
// A request that finds no token waits on the channel, in the order it came.
type backend struct {
	id      string
	mu      sync.Mutex // guards the fields below
	latency time.Duration
	fail    float64
	workers int // 0: no pool
	held    int // tokens the backend holds back from the pool
	pool    chan struct{}
}

// maxWorkers bounds the pool's size over the backend's life.
const maxWorkers = 4096

func newBackend(id int, latency time.Duration, workers int, fail float64) *backend {
	b := &backend{id: strconv.Itoa(id), latency: latency, fail: fail, pool: make(chan struct{}, maxWorkers)}
	b.held = maxWorkers
	b.resize(workers)
	return b
}

// resize makes the pool n workers (0: unbounded). Taking tokens back
// waits for them to be free, in a goroutine of its own, so that a
// backend that halves its capacity under load does it as its workers
// finish.
func (b *backend) resize(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.workers = min(max(n, 0), maxWorkers)
	want := maxWorkers - b.workers
	if b.workers == 0 {
		want = 0
	}
	for ; b.held > want; b.held-- {
		b.pool <- struct{}{}
	}
	if take := want - b.held; take > 0 {
		b.held = want
		go func() {
			for range take {
				<-b.pool
			}
		}()
	}
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/_ctl" {
		b.control(w, r)
		return
	}
	b.mu.Lock()
	latency, fail, bounded := b.latency, b.fail, b.workers > 0
	b.mu.Unlock()
	w.Header().Set("X-Backend", b.id)
	if fail > 0 && rand.Float64() < fail {
		http.Error(w, "failing", http.StatusServiceUnavailable)
		return
	}
	if bounded {
		select {
		case <-b.pool:
			defer func() { b.pool <- struct{}{} }()
		case <-r.Context().Done():
			return
		}
	}
	if latency > 0 {
		time.Sleep(latency)
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Write([]byte("ok\n"))
}

// control changes the backend: POST /_ctl?workers=N&latency=D&fail=F,
// any of them; GET /_ctl reports what is in force.
func (b *backend) control(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		if v := q.Get("workers"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			b.resize(n)
		}
		b.mu.Lock()
		if d, err := time.ParseDuration(q.Get("latency")); err == nil {
			b.latency = d
		}
		if f, err := strconv.ParseFloat(q.Get("fail"), 64); err == nil {
			b.fail = f
		}
		b.mu.Unlock()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprintf(w, "id=%s latency=%v workers=%d fail=%g\n", b.id, b.latency, b.workers, b.fail)
}
