// Goproxy is the baseline of the proxy benchmark (bench/proxy): Go's
// httputil.ReverseProxy over a list of backends in turn (round robin),
// with nothing else: no retries, no health checks, no limits. Its
// Transport keeps up to 256 idle connections per backend, where the
// default keeps 2, which would make it open a connection for most
// requests under load.
//
//	goproxy -listen 127.0.0.1:8080 -to http://127.0.0.1:9001,http://127.0.0.1:9002
package main

import (
	"flag"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "the address to serve on")
	to := flag.String("to", "", "the backends, comma-separated URLs")
	flag.Parse()
	var targets []*url.URL
	for _, s := range strings.Split(*to, ",") {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			fmt.Fprintf(os.Stderr, "goproxy: %q is not a backend URL\n", s)
			os.Exit(2)
		}
		targets = append(targets, u)
	}
	var next atomic.Uint64
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(targets[(next.Add(1)-1)%uint64(len(targets))])
			pr.SetXForwarded()
		},
		Transport: &http.Transport{
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     90 * time.Second,
		},
	}
	srv := &http.Server{Addr: *listen, Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "goproxy:", err)
		os.Exit(1)
	}
}
