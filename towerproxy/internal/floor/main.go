// Floor is the floor of the proxy benchmark's overhead cell for a proxy
// built on net/http (bench/proxy, the `floor` row): net/http's Server in
// front and towerproxy's own HTTP/1.1 client (internal/h1) behind, with
// nothing between them. No stack, no httputil.ReverseProxy, no limit,
// retry or health check: each request goes to the next backend in turn,
// with its header less the hop-by-hop fields and with X-Forwarded-For,
// and its answer is copied back.
//
// What towerproxy spends above this row is its stack and ReverseProxy;
// what this row spends above nginx is net/http's server and its Request,
// Header and Response types, which every proxy on net/http pays.
//
//	floor -listen 127.0.0.1:8080 -to http://127.0.0.1:9001,http://127.0.0.1:9002
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/towergo/tower/towerproxy/internal/h1"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "the address to serve on")
	to := flag.String("to", "", "the backends, comma-separated URLs")
	flag.Parse()
	targets, err := parseTargets(*to)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(2)
	}
	client := h1.New(&http.Transport{MaxIdleConnsPerHost: 256}, h1.Options{MaxIdlePerHost: 256, IdleTimeout: 90 * time.Second})
	srv := &http.Server{Addr: *listen, Handler: newHandler(targets, client), ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

// parseTargets parses -to: one or more http URLs with a host.
func parseTargets(s string) ([]*url.URL, error) {
	var targets []*url.URL
	for _, v := range strings.Split(s, ",") {
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			return nil, fmt.Errorf("%q is not a backend URL (http://host:port)", v)
		}
		targets = append(targets, u)
	}
	return targets, nil
}

// hopHeaders are the fields of one connection, not of the request
// (RFC 9110, section 7.6.1), besides those its Connection field names.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// newHandler forwards each request to the next of targets through rt.
func newHandler(targets []*url.URL, rt http.RoundTripper) http.Handler {
	var next atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := targets[(next.Add(1)-1)%uint64(len(targets))]
		out := r.Clone(r.Context())
		out.RequestURI = ""
		out.URL.Scheme, out.URL.Host = t.Scheme, t.Host
		if r.ContentLength == 0 {
			out.Body = nil
		}
		removeHops(out.Header)
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			out.Header["X-Forwarded-For"] = []string{host}
		}
		resp, err := rt.RoundTrip(out)
		if err != nil {
			http.Error(w, "floor: "+err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		removeHops(resp.Header)
		h := w.Header()
		for k, v := range resp.Header {
			h[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	})
}

// removeHops deletes h's hop-by-hop fields.
func removeHops(h http.Header) {
	for _, v := range h["Connection"] {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				h.Del(f)
			}
		}
	}
	for _, f := range hopHeaders {
		delete(h, f)
	}
}
