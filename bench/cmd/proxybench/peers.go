package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// A setup is what a proxy is started with in one cell of the table.
type setup struct {
	dir      string   // the cell's directory: configuration, logs, pid files
	listen   string   // host:port of the proxied traffic
	admin    string   // host:port for an admin listener, where the proxy has one
	backends []string // host:port of each backend
	cpus     int      // cores the proxy may use
	nofile   int      // open files it may have
	sc       *scenario
}

// A launch is how to start a proxy: its command, its environment, and
// the files to write into the cell's directory first.
type launch struct {
	argv  []string
	env   []string
	files map[string]string
}

// A proxy is one row kind of the table: how to start it in a cell.
type proxy struct {
	name string
	bin  string // the binary, a path or a name looked up in PATH
	// start returns how to start it; nil for the direct rows, which
	// have no proxy.
	start func(bin string, s setup) launch
	// only is the one scenario the row is in; "" for every one.
	only string
}

// nginxConf is nginx's configuration at its best for s: least_conn,
// connections to the backends kept alive, a request that meets an error,
// a timeout or a 502/503/504 tried on the next backend (each backend
// once at most), and a backend that fails once left out for 10 s
// (max_fails=1 fail_timeout=10s: the failures counted are those that
// proxy_next_upstream lists). With the scenario's oracles: a backend
// slower than slowAfter is a timeout (so it is retried elsewhere and
// left out), and each backend takes at most capacity requests at once
// (max_conns; nginx OSS has no queue, so a request that finds every
// backend full is answered 502 at once).
func nginxConf(s setup) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("worker_processes %d;", s.cpus)
	p("worker_rlimit_nofile %d;", s.nofile)
	p("pid %s;", filepath.Join(s.dir, "nginx.pid"))
	// crit: a request nginx cannot place (every backend full or down)
	// is an error line each, a cost no other proxy here pays.
	p("error_log %s crit;", filepath.Join(s.dir, "nginx-error.log"))
	p("daemon off;")
	p("events { worker_connections %d; multi_accept on; }", s.nofile/2)
	p("http {")
	p("  access_log off;")
	for _, t := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		p("  %s_temp_path %s;", t, filepath.Join(s.dir, "nginx-"+t))
	}
	p("  keepalive_requests 1000000;")
	p("  upstream backends {")
	p("    least_conn;")
	maxConns := ""
	if s.sc.capacity > 0 {
		maxConns = fmt.Sprintf(" max_conns=%d", s.sc.capacity)
	}
	for _, a := range s.backends {
		p("    server %s max_fails=1 fail_timeout=10s%s;", a, maxConns)
	}
	p("    keepalive 256;")
	p("    keepalive_requests 1000000;")
	p("  }")
	p("  server {")
	p("    listen %s backlog=4096;", s.listen)
	p("    location / {")
	p("      proxy_pass http://backends;")
	p("      proxy_http_version 1.1;")
	p("      proxy_set_header Connection \"\";")
	p("      proxy_next_upstream error timeout http_502 http_503 http_504;")
	p("      proxy_connect_timeout 1s;")
	p("      proxy_read_timeout %s;", nginxDuration(orDefault(s.sc.slowAfter, 60*time.Second)))
	p("    }")
	p("  }")
	p("}")
	return b.String()
}

// haproxyConf is HAProxy's configuration at its best for s: leastconn,
// server connections reused by any request (http-reuse always), up to 2
// retries, each on another server (option redispatch 1), of connection
// failures, empty answers, timeouts and 502/503/504 (retry-on), a server
// marked down after 3 errors in a row seen in the traffic (observe layer7
// error-limit 3 on-error mark-down) and brought back by the active check
// (GET / every second, rise 2, fall 3). With the scenario's oracles: a
// server slower than slowAfter is a timeout, of a request and of a check;
// each server takes at most capacity requests at once (maxconn), the
// others wait in HAProxy's queue for up to 25 ms (timeout queue, the
// patience towerproxy's admission has by default) and are then answered
// 503.
func haproxyConf(s setup) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	slow := orDefault(s.sc.slowAfter, 30*time.Second)
	p("global")
	p("  nbthread %d", s.cpus)
	p("  maxconn %d", s.nofile/2-100)
	p("defaults")
	p("  mode http")
	p("  timeout connect 1s")
	p("  timeout client 30s")
	p("  timeout server %s", haproxyDuration(slow))
	p("  timeout check %s", haproxyDuration(min(slow, time.Second)))
	p("  timeout queue %s", haproxyDuration(map[bool]time.Duration{true: 25 * time.Millisecond, false: time.Second}[s.sc.capacity > 0]))
	p("  timeout http-keep-alive 60s")
	p("  retries 2")
	p("  option redispatch 1")
	p("  retry-on conn-failure empty-response response-timeout 502 503 504")
	p("  http-reuse always")
	p("frontend in")
	p("  bind %s", s.listen)
	p("  default_backend backends")
	p("backend backends")
	p("  balance leastconn")
	p("  option httpchk GET /")
	maxconn := ""
	if s.sc.capacity > 0 {
		maxconn = fmt.Sprintf(" maxconn %d", s.sc.capacity)
	}
	p("  default-server check inter 1s rise 2 fall 3 observe layer7 error-limit 3 on-error mark-down%s", maxconn)
	for i, a := range s.backends {
		p("  server b%d %s", i, a)
	}
	return b.String()
}

// caddyfile is Caddy's configuration at its best for s: least_conn, up to
// 2 retries within 1 s of a request that could not reach a backend
// (Caddy 2.6 does not retry a request that got an answer, a 503
// included), a backend that fails once (an error or a 5xx) left out for
// 10 s, and the active check (GET / every second). With the scenario's
// oracles: a backend slower than slowAfter counts as failing
// (unhealthy_latency); each backend takes at most
// capacity requests at once (unhealthy_request_count), and a request that
// finds them all full tries again every 5 ms for up to 25 ms (the
// patience towerproxy's admission has by default), then is answered 503.
func caddyfile(s setup) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	host, port, _ := strings.Cut(s.listen, ":")
	p("{")
	p("\tadmin off")
	p("\tauto_https off")
	// Caddy logs each request it cannot place ("no upstreams available")
	// as an error, a cost no other proxy here pays.
	p("\tlog {")
	p("\t\tlevel PANIC")
	p("\t}")
	p("}")
	p("http://:%s {", port)
	p("\tbind %s", host)
	p("\treverse_proxy %s {", strings.Join(s.backends, " "))
	p("\t\tlb_policy least_conn")
	p("\t\tlb_retries 2")
	if s.sc.capacity > 0 {
		p("\t\tlb_try_duration 25ms")
		p("\t\tlb_try_interval 5ms")
		p("\t\tunhealthy_request_count %d", s.sc.capacity)
	} else {
		p("\t\tlb_try_duration 1s")
		p("\t\tlb_try_interval 10ms")
	}
	p("\t\thealth_uri /")
	p("\t\thealth_interval 1s")
	// 1 s even where slowAfter is shorter: a check that times out marks
	// a backend down at once in Caddy 2.6 (it has no health_fails), so a
	// short one leaves every backend out whenever the machine stalls.
	p("\t\thealth_timeout 1s")
	p("\t\tfail_duration 10s")
	p("\t\tmax_fails 1")
	p("\t\tunhealthy_status 5xx")
	if s.sc.slowAfter > 0 {
		p("\t\tunhealthy_latency %s", s.sc.slowAfter)
	}
	p("\t\ttransport http {")
	p("\t\t\tkeepalive 60s")
	p("\t\t\tkeepalive_idle_conns 256")
	p("\t\t\tkeepalive_idle_conns_per_host 256")
	p("\t\t}")
	p("\t}")
	p("}")
	return b.String()
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// nginxDuration writes d as nginx reads it: whole milliseconds.
func nginxDuration(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }

// haproxyDuration writes d as HAProxy reads it: whole milliseconds.
func haproxyDuration(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }

// goEnv is the environment of a Go proxy on s.cpus cores.
func goEnv(s setup) []string { return []string{fmt.Sprintf("GOMAXPROCS=%d", s.cpus)} }

func urls(backends []string) string {
	u := make([]string, len(backends))
	for i, b := range backends {
		u[i] = "http://" + b
	}
	return strings.Join(u, ",")
}

// proxies are the table's rows in each scenario, in order.
var proxies = []proxy{
	{name: "direct"},
	{name: "nginx", bin: "nginx", start: func(bin string, s setup) launch {
		conf := filepath.Join(s.dir, "nginx.conf")
		return launch{
			argv:  []string{bin, "-p", s.dir, "-e", filepath.Join(s.dir, "nginx-error.log"), "-c", conf},
			files: map[string]string{"nginx.conf": nginxConf(s)},
		}
	}},
	{name: "haproxy", bin: "haproxy", start: func(bin string, s setup) launch {
		return launch{
			argv:  []string{bin, "-db", "-f", filepath.Join(s.dir, "haproxy.cfg")},
			files: map[string]string{"haproxy.cfg": haproxyConf(s)},
		}
	}},
	{name: "caddy", bin: "caddy", start: func(bin string, s setup) launch {
		return launch{
			argv: []string{bin, "run", "--adapter", "caddyfile", "--config", filepath.Join(s.dir, "Caddyfile")},
			env: append(goEnv(s), "XDG_CONFIG_HOME="+filepath.Join(s.dir, "caddy-config"),
				"XDG_DATA_HOME="+filepath.Join(s.dir, "caddy-data"), "HOME="+s.dir),
			files: map[string]string{"Caddyfile": caddyfile(s)},
		}
	}},
	{name: "goproxy", bin: "goproxy", start: func(bin string, s setup) launch {
		return launch{argv: []string{bin, "-listen", s.listen, "-to", urls(s.backends)}, env: goEnv(s)}
	}},
	// The floor of a proxy on net/http, in overhead only: net/http's
	// server and towerproxy's HTTP/1.1 client, nothing between them
	// (towerproxy/internal/floor).
	{name: "floor", bin: "floor", only: "overhead", start: func(bin string, s setup) launch {
		return launch{argv: []string{bin, "-listen", s.listen, "-to", urls(s.backends)}, env: goEnv(s)}
	}},
	// towerproxy as its quick start runs it: every protection at its
	// defaults, nothing told. The admin listener is moved to a free port
	// only so that it cannot clash with anything else on the machine, and
	// the access log is off, as every peer's is.
	{name: "towerproxy", bin: "towerproxy", start: func(bin string, s setup) launch {
		return launch{argv: []string{bin, "-listen", s.listen, "-admin", s.admin, "-access-log", "off", "-to", urls(s.backends)}, env: goEnv(s)}
	}},
}
