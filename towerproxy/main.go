// Command towerproxy is an HTTP reverse proxy built on tower for Go: every
// upstream behind an adaptive concurrency limit that nobody has to size,
// power-of-two-choices balancing over PeakEWMA, outlier ejection with a
// cap, retries of idempotent requests within a budget, and the whole
// proxy behind a limit of its own.
//
// Three ways to start:
//
//	towerproxy -demo
//	towerproxy -listen :8080 -to http://127.0.0.1:9001,http://127.0.0.1:9002
//	towerproxy -config proxy.yaml
//
// The first is a demonstration that needs nothing else: it starts four
// backends of its own (two healthy, one slow, one failing half its
// requests), offers them twice what they can answer for 30 seconds through
// towerproxy and through a bare httputil.ReverseProxy, serves the live
// page meanwhile, prints what each proxy's clients got, and stops.
// The second sends every request to the backends listed, with every
// protection at its defaults; the third reads a YAML file, strictly: an
// unknown field or a bad value is an error that names the file and the
// line, and the proxy does not start. SIGHUP, or a change of the file,
// reloads it without dropping a request; SIGTERM or SIGINT drains the
// proxy (it stops accepting, lets the requests in flight finish) and ends
// it.
//
// The admin listener, on 127.0.0.1:9901 unless -admin says otherwise,
// serves the metrics for Prometheus at /metrics, the state as JSON at
// /status, /healthz, and the live page at /live/. Each request has a JSON
// line in the access log, on standard output unless -access-log or the
// file's access_log says otherwise.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/towergo/tower/towerproxy/internal/demo"
	"github.com/towergo/tower/towerproxy/proxy"
)

func main() {
	tuneGC()
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "towerproxy:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("towerproxy", flag.ContinueOnError)
	listen := fs.String("listen", ":8080", "the address of the proxied traffic, with -to")
	to := fs.String("to", "", "the backends, comma-separated URLs: http://host:port,...")
	config := fs.String("config", "", "a YAML configuration file")
	admin := fs.String("admin", "", "the admin listener's address (default 127.0.0.1:9901; off to turn it off)")
	accessLog := fs.String("access-log", "", "where each request's JSON line goes: stdout (default), stderr, off, or a file")
	demoMode := fs.Bool("demo", false, "run the built-in demonstration, and stop")
	demoFor := fs.Duration("demo-duration", 30*time.Second, "how long the demonstration's load lasts")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *demoMode {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		return demo.Run(ctx, os.Stdout, demo.Options{Duration: *demoFor, Admin: *admin, AdminHandler: (*proxy.Proxy).AdminHandler})
	}
	cfg, err := configure(*config, *listen, *to)
	if err != nil {
		return err
	}
	if *admin != "" {
		cfg.Admin = *admin
	}
	if *accessLog != "" {
		cfg.AccessLog = *accessLog
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	p, err := proxy.New(cfg, proxy.WithLogger(log))
	if err != nil {
		return err
	}
	srv, err := proxy.NewServer(p, p.AdminHandler())
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if *config != "" {
		// Before the listeners open: a SIGHUP that came first would end
		// the process, SIGHUP's default.
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		go reloads(ctx, p, *config, hup, log)
	}
	return srv.Serve(ctx)
}

// gcPercent is the proxy's GOGC unless the environment sets one. A
// proxy's live heap is small (connections' buffers and the routes) and
// nearly all it allocates dies with its request, so at Go's default of 100
// it collects often for little: at 400 the heap may grow to five times
// what is live, a few tens of megabytes, and each request costs less CPU.
const gcPercent = 400

// tuneGC sets the collector's target to gcPercent, unless GOGC is set.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}

// configure returns the configuration of the flags: the file's, or the
// quick start's.
func configure(file, listen, to string) (*proxy.Config, error) {
	switch {
	case file != "" && to != "":
		return nil, errors.New("give -config or -to, not both")
	case file != "":
		return proxy.Load(file)
	case to != "":
		return proxy.Quick(listen, strings.Split(to, ","))
	}
	return nil, errors.New("nothing to proxy: give -to http://host:port,... or -config proxy.yaml")
}

// reloads reloads p from file on each signal of hup (SIGHUP) and
// whenever the file changes, until ctx ends. A file that does not load is
// reported, and the configuration in force stays.
func reloads(ctx context.Context, p *proxy.Proxy, file string, hup <-chan os.Signal, log *slog.Logger) {
	mod := modTime(file)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		case <-tick.C:
			m := modTime(file)
			if m.Equal(mod) {
				continue
			}
			mod = m
		}
		cfg, err := proxy.Load(file)
		if err == nil {
			err = p.Reload(cfg)
		}
		if err != nil {
			log.Error("towerproxy: reload failed; the configuration in force stays", "err", err)
		}
	}
}

func modTime(file string) time.Time {
	st, err := os.Stat(file)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}
