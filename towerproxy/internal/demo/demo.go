// Package demo is towerproxy's built-in demonstration: it starts backends
// of its own on loopback (two healthy, one slow, one failing half its
// requests, each with a capacity of its own), drives twice their capacity
// through towerproxy and, beside it, through a bare httputil.ReverseProxy
// over a copy of the same backends, and prints what each proxy's clients
// got.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower/towerproxy/proxy"
)

// Options shape a demonstration.
type Options struct {
	// Duration is how long the load lasts, 30s by default: half of it
	// through towerproxy, then half through the bare ReverseProxy.
	Duration time.Duration
	// Admin is the address of towerproxy's admin listener, where the live
	// page is, "127.0.0.1:9901" by default; "off" turns it off.
	Admin string
	// AdminHandler, if set, serves the admin listener (the live page and
	// the metrics); nil serves only /healthz.
	AdminHandler func(*proxy.Proxy) http.Handler
	// Log receives the proxy's own log; nil discards it.
	Log *slog.Logger
	// Timeout is how long a client waits for an answer, and the latency
	// within which a 2xx counts as goodput: a second by default. Without a
	// limit, a backend offered more than it can take queues its requests
	// until they wait this long, which takes each healthy backend about
	// 3.6 times Timeout here; a run much shorter than that shows the
	// bare proxy before its queues have grown.
	Timeout time.Duration
}

// Run runs the demonstration, writes its progress and its table to out,
// and returns once the load is over, or ctx ends.
func Run(ctx context.Context, out io.Writer, o Options) error {
	if o.Duration <= 0 {
		o.Duration = 30 * time.Second
	}
	if o.Admin == "" {
		o.Admin = "127.0.0.1:9901"
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ours, err := startSet()
	if err != nil {
		return err
	}
	defer ours.close()
	bare, err := startSet()
	if err != nil {
		return err
	}
	defer bare.close()

	cfg, err := proxy.Quick("127.0.0.1:0", ours.urls())
	if err != nil {
		return err
	}
	cfg.Admin, cfg.AccessLog = o.Admin, "off"
	p, err := proxy.New(cfg, proxy.WithLogger(log))
	if err != nil {
		return err
	}
	var admin http.Handler
	if o.AdminHandler != nil {
		admin = o.AdminHandler(p)
	}
	srv, err := proxy.NewServer(p, admin)
	if err != nil {
		return err
	}
	mainLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	var adminLn net.Listener
	if cfg.Admin != "off" {
		if adminLn, err = net.Listen("tcp", cfg.Admin); err != nil {
			mainLn.Close()
			return fmt.Errorf("the admin listener (-admin off to go without it): %w", err)
		}
	}
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.ServeListeners(sctx, mainLn, adminLn) }()
	defer func() {
		stop()
		<-served
	}()

	bareLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	bareSrv := &http.Server{Handler: bareProxy(bare.urls()), ReadHeaderTimeout: 5 * time.Second}
	go bareSrv.Serve(bareLn)
	defer bareSrv.Close()

	rate := 2 * capacity()
	half := o.Duration / 2
	fmt.Fprintf(out, "towerproxy demo: 4 backends (2 healthy, 1 slow, 1 failing half its requests) can answer %d requests/s.\n", capacity())
	fmt.Fprintf(out, "Offering twice that, %d/s, for %v through towerproxy (http://%s), then for %v through a bare\n", rate, half, mainLn.Addr(), half)
	fmt.Fprintf(out, "httputil.ReverseProxy over a copy of the backends (http://%s).\n", bareLn.Addr())
	if adminLn != nil {
		fmt.Fprintf(out, "Live page, while it runs: http://%s/live/\n", adminLn.Addr())
	}
	fmt.Fprintln(out)

	results := make([]*tally, 2)
	for i, target := range []string{"http://" + mainLn.Addr().String(), "http://" + bareLn.Addr().String()} {
		fmt.Fprintf(out, "%s ...\n", []string{"towerproxy", "ReverseProxy"}[i])
		results[i] = drive(ctx, target, rate, half, o.Timeout)
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	fmt.Fprintln(out)
	report(out, []string{"towerproxy", "ReverseProxy"}, results, o.Timeout)
	return nil
}

// A set is one copy of the demo's backends.
type set []*backend

func startSet() (set, error) {
	var s set
	for _, k := range kinds {
		b, err := startBackend(k)
		if err != nil {
			s.close()
			return nil, err
		}
		s = append(s, b)
	}
	return s, nil
}

func (s set) urls() []string {
	var u []string
	for _, b := range s {
		u = append(u, "http://"+b.addr)
	}
	return u
}

func (s set) close() {
	for _, b := range s {
		b.close()
	}
}

// bareProxy is the baseline: Go's ReverseProxy over the backends in turn,
// as a newcomer would write it, with nothing else.
func bareProxy(backends []string) http.Handler {
	var next atomic.Uint64
	targets := make([]*url.URL, len(backends))
	for i, b := range backends {
		targets[i], _ = url.Parse(b)
	}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(targets[next.Add(1)%uint64(len(targets))])
		},
		ErrorLog: nil,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			w.WriteHeader(http.StatusBadGateway)
		},
	}
}

// tally is what the clients of one proxy got.
type tally struct {
	mu        sync.Mutex
	sent      int
	good      int // 2xx within the timeout
	failed    int // 5xx or no answer, other than shed
	shed      int // 503 from the proxy itself, at once
	latencies []time.Duration
	backends  map[string]int // 2xx answers by backend
	length    time.Duration
	timeout   time.Duration // the clients'
}

// drive sends rate requests a second to target for length, an open loop
// (a request is sent on time whether earlier ones were answered or not),
// each with timeout, and tallies the answers.
func drive(ctx context.Context, target string, rate int, length, timeout time.Duration) *tally {
	t := &tally{backends: map[string]int{}, length: length, timeout: timeout}
	client := &http.Client{
		Timeout:   timeout,
		Transport: &http.Transport{MaxIdleConnsPerHost: 512, IdleConnTimeout: 30 * time.Second},
	}
	defer client.CloseIdleConnections()
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; ; i++ {
		due := start.Add(time.Duration(i) * interval)
		if due.Sub(start) >= length || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Until(due))
		wg.Go(func() { t.send(client, target) })
	}
	wg.Wait()
	return t
}

// send sends one request and records its answer.
func (t *tally) send(client *http.Client, target string) {
	start := time.Now()
	res, err := client.Get(target + "/")
	d := time.Since(start)
	backend := ""
	code := 0
	if err == nil {
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		code, backend = res.StatusCode, res.Header.Get("X-Backend")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sent++
	switch {
	case err == nil && code < 300 && d <= t.timeout:
		t.good++
		t.latencies = append(t.latencies, d)
		t.backends[backend]++
	case err == nil && code == http.StatusServiceUnavailable && backend == "":
		t.shed++ // the proxy's own 503: no backend was asked
	default:
		t.failed++
		if err == nil {
			t.latencies = append(t.latencies, d)
		} else if !errors.Is(err, context.Canceled) {
			t.latencies = append(t.latencies, t.timeout)
		}
	}
}

// report prints one line per proxy, then each backend's share of the
// good answers.
func report(out io.Writer, names []string, ts []*tally, timeout time.Duration) {
	fmt.Fprintf(out, "%-13s %8s %8s %8s %8s %8s\n", "", "goodput", "p50", "p99", "errors", "shed")
	for i, t := range ts {
		goodput := float64(t.good) / t.length.Seconds()
		fmt.Fprintf(out, "%-13s %7.0f/s %8s %8s %7.1f%% %7.1f%%\n", names[i], goodput,
			ms(pct(t.latencies, 50)), ms(pct(t.latencies, 99)), 100*float64(t.failed)/float64(max(t.sent, 1)), 100*float64(t.shed)/float64(max(t.sent, 1)))
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "%-13s", "share of 2xx")
	for _, k := range kinds {
		fmt.Fprintf(out, " %10s", k.name)
	}
	fmt.Fprintln(out)
	for i, t := range ts {
		fmt.Fprintf(out, "%-13s", names[i])
		for _, k := range kinds {
			fmt.Fprintf(out, " %9.0f%%", 100*float64(t.backends[k.name])/float64(max(t.good, 1)))
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "goodput: answers 2xx within %v, per second; errors: 5xx from a backend, 502/504, or no answer within %v;\n", timeout, timeout)
	fmt.Fprintln(out, "shed: 503 from the proxy itself, at once, so that the client can go elsewhere or come back later.")
}

// pct returns the p-th percentile of ds.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, (len(s)*p+99)/100-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }
