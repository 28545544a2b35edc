// Proxybench measures towerproxy beside nginx, HAProxy, Caddy and Go's
// httputil.ReverseProxy, each over the same four backends on loopback
// (proxybackend processes), in the scenarios of issue 26, and prints one
// line per proxy and scenario, then the issue's targets, met or missed.
// bench/proxy/run.sh installs the peers, builds the Go programs and runs
// it; see bench/proxy/README.md.
//
//	proxybench -backend bin/proxybackend -goproxy bin/goproxy -floor bin/floor -towerproxy bin/towerproxy
//	proxybench ... -duration 3s -warmup 1s -scenarios overhead,slow1 -proxies nginx,towerproxy
//
// It exits 1 if a target is missed, 2 if the run itself failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// verbose makes the run say how long each cell and its steps took.
var verbose bool

// config is what a run measures, and with what.
type config struct {
	bins      map[string]string // binary by proxy name, and "backend", "wrk"
	workdir   string
	warmup    time.Duration
	window    time.Duration
	timeout   time.Duration
	cpus      int
	hz        int
	nofile    int
	loadgen   string // "wrk" or "go", for the closed loop
	proxies   []string
	scenarios []string
	subject   string
}

func main() {
	c := config{bins: map[string]string{}}
	for _, name := range []string{"nginx", "haproxy", "caddy", "wrk"} {
		c.bins[name] = name
	}
	for _, name := range []string{"backend", "goproxy", "floor", "towerproxy", "nginx", "haproxy", "caddy", "wrk"} {
		flag.Func(name, "the "+name+" binary (default: "+orName(c.bins[name])+")", func(s string) error {
			c.bins[name] = s
			return nil
		})
	}
	flag.StringVar(&c.workdir, "workdir", "", "where each cell's configuration and logs go (default: a temporary directory, removed)")
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "load before each measured window, not counted")
	flag.DurationVar(&c.window, "duration", 10*time.Second, "each cell's measured window")
	flag.DurationVar(&c.timeout, "timeout", 2*time.Second, "a request not answered by then is a failure")
	flag.IntVar(&c.cpus, "cpus", 1, "cores each proxy may use (nginx workers, HAProxy threads, GOMAXPROCS)")
	flag.IntVar(&c.hz, "hz", 100, "clock ticks per second of /proc/<pid>/stat (getconf CLK_TCK)")
	flag.StringVar(&c.loadgen, "loadgen", "wrk", "the closed loop's load generator: wrk, or go (this program)")
	proxiesFlag := flag.String("proxies", names(len(proxies), func(i int) string { return proxies[i].name }), "the rows, comma-separated")
	scenariosFlag := flag.String("scenarios", names(len(scenarios), func(i int) string { return scenarios[i].name }), "the scenarios, comma-separated")
	flag.StringVar(&c.subject, "subject", "towerproxy", "the proxy the targets are judged for")
	flag.BoolVar(&verbose, "v", false, "say how long each cell and its steps took")
	flag.Parse()
	c.proxies = strings.Split(*proxiesFlag, ",")
	c.scenarios = strings.Split(*scenariosFlag, ",")
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil {
		c.nofile = int(min(lim.Cur, 1<<20))
	}
	code, err := measure(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "proxybench:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func orName(s string) string {
	if s == "" {
		return "required for its rows"
	}
	return s + " in PATH"
}

func names(n int, name func(int) string) string {
	s := make([]string, n)
	for i := range s {
		s[i] = name(i)
	}
	return strings.Join(s, ",")
}

// measure runs every cell and prints the table and the verdicts; it
// returns 1 if a target is missed.
func measure(c config) (int, error) {
	if c.nofile < 4096 {
		return 0, fmt.Errorf("only %d open files allowed: raise it (ulimit -n)", c.nofile)
	}
	for _, name := range c.scenarios {
		if !slices.ContainsFunc(scenarios, func(s scenario) bool { return s.name == name }) {
			return 0, fmt.Errorf("no scenario %q", name)
		}
	}
	for _, name := range c.proxies {
		if !slices.ContainsFunc(proxies, func(p proxy) bool { return p.name == name }) {
			return 0, fmt.Errorf("no proxy %q", name)
		}
	}
	if _, err := exec.LookPath(c.bins["backend"]); err != nil {
		return 0, fmt.Errorf("the backends: -backend: %w", err)
	}
	if c.workdir == "" {
		dir, err := os.MkdirTemp("", "proxybench")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(dir)
		c.workdir = dir
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		stopAll()
		os.Exit(2)
	}()
	defer stopAll()

	rs := results{}
	fmt.Printf("# %d CPUs, each proxy on %d; %v warmup + %v window per cell; client timeout %v; load average %s\n",
		runtime.NumCPU(), c.cpus, c.warmup, c.window, c.timeout, loadavg())
	fmt.Println(header)
	failed := 0
	for _, sc := range scenarios {
		if !slices.Contains(c.scenarios, sc.name) {
			continue
		}
		for _, px := range proxies {
			if !slices.Contains(c.proxies, px.name) || (px.start == nil && !sc.direct) || (px.only != "" && px.only != sc.name) {
				continue
			}
			if px.start != nil {
				if _, err := exec.LookPath(c.bins[px.name]); err != nil {
					fmt.Fprintf(os.Stderr, "# %s %s: skipped: %v\n", px.name, sc.name, err)
					continue
				}
			}
			t0 := time.Now()
			r, err := cell(c, px, &sc)
			if verbose {
				fmt.Fprintf(os.Stderr, "# %s %s: %.1fs\n", px.name, sc.name, time.Since(t0).Seconds())
			}
			if err != nil {
				failed++
				fmt.Fprintf(os.Stderr, "# %s %s: %v\n", px.name, sc.name, err)
				continue
			}
			rs[[2]string{px.name, sc.name}] = r
			fmt.Println(r.line())
		}
	}
	fmt.Printf("# load average at the end: %s\n\n", loadavg())
	code := 0
	for _, v := range judge(rs, c.subject) {
		fmt.Printf("target %-9s %-7s %s\n", v.scenario, v.state, v.text)
		if v.state == "missed" {
			code = 1
		}
	}
	if failed > 0 {
		return code, fmt.Errorf("%d cells failed", failed)
	}
	return code, nil
}

// loadavg returns the machine's load averages over 1, 5 and 15 minutes,
// as /proc/loadavg has them: a table taken at more than the cores is the
// machine's as much as the proxies'.
func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(data)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// backends are a cell's backend processes; backend 0 may be killed and
// started again during the window, from an event's goroutine.
type backends struct {
	c     config
	dir   string
	sc    *scenario
	addrs []string
	mu    sync.Mutex
	procs []*process
}

func (b *backends) start(i int) error {
	s := b.sc.spec(i)
	p, err := start(fmt.Sprintf("backend%d", i), b.dir, []string{b.c.bins["backend"], "-listen", b.addrs[i],
		"-id", fmt.Sprint(i), "-latency", s.latency.String(), "-workers", fmt.Sprint(s.workers), "-fail", fmt.Sprint(s.fail)}, nil)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.procs[i] = p
	b.mu.Unlock()
	return waitHTTP(p, "http://"+b.addrs[i]+"/_ctl", 10*time.Second)
}

// event does e to backend 0.
func (b *backends) event(e event) {
	var err error
	switch {
	case e.kind == "kill":
		b.mu.Lock()
		p := b.procs[0]
		b.mu.Unlock()
		p.kill()
	case e.kind == "restart":
		err = b.start(0)
	case strings.HasPrefix(e.kind, "workers="):
		err = control(context.Background(), b.addrs[0], e.kind)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "# event %s: %v\n", e.kind, err)
	}
}

func (b *backends) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.procs {
		if p != nil {
			p.stop(time.Second)
		}
	}
}

// cell measures px in sc: fresh backends, a fresh proxy, the load.
func cell(c config, px proxy, sc *scenario) (result, error) {
	t0 := time.Now()
	step := func(what string) {
		if verbose {
			fmt.Fprintf(os.Stderr, "#   %s: %.2fs\n", what, time.Since(t0).Seconds())
		}
	}
	defer step("stopped")
	dir := filepath.Join(c.workdir, sc.name+"-"+px.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return result{}, err
	}
	addrs, err := freePorts(6)
	if err != nil {
		return result{}, err
	}
	b := &backends{c: c, dir: dir, sc: sc, addrs: addrs[:4], procs: make([]*process, 4)}
	defer b.stop()
	for i := range b.addrs {
		if err := b.start(i); err != nil {
			return result{}, err
		}
	}
	r := run{warmup: c.warmup, window: c.window, timeout: c.timeout, events: sc.events, atEvent: b.event}
	var p *process
	if px.start == nil {
		for _, a := range b.addrs {
			r.targets = append(r.targets, "http://"+a+"/")
		}
	} else {
		s := setup{dir: dir, listen: addrs[4], admin: addrs[5], backends: b.addrs, cpus: c.cpus, nofile: c.nofile, sc: sc}
		l := px.start(c.bins[px.name], s)
		for name, text := range l.files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				return result{}, err
			}
		}
		if p, err = start(px.name, dir, l.argv, l.env); err != nil {
			return result{}, err
		}
		defer p.stop(3 * time.Second)
		r.targets = []string{"http://" + s.listen + "/"}
		if err := waitHTTP(p, r.targets[0], 10*time.Second); err != nil {
			return result{}, err
		}
	}
	step("ready")
	var cpu0 time.Duration
	var cpuErr error
	if p != nil {
		r.atWindow = func() { cpu0, cpuErr = p.cpuTime(c.hz) }
	}
	var res result
	switch {
	case p == nil && sc.saturate > 0:
		res = summarize(px.name, sc.name, r.window, closedLoop(r, sc.saturate))
	case sc.conns > 0 && c.loadgen == "wrk":
		if res, err = runWrk(c.bins["wrk"], dir, r, sc.conns, px.name, sc.name); err != nil {
			return result{}, err
		}
	case sc.conns > 0:
		res = summarize(px.name, sc.name, r.window, closedLoop(r, sc.conns))
	default:
		samples, lag := openLoop(r, sc.rate)
		res = summarize(px.name, sc.name, r.window, samples)
		if lag > time.Millisecond {
			fmt.Fprintf(os.Stderr, "# %s %s: the load generator sent its requests up to %.1f ms late (p99): the machine is busy\n", px.name, sc.name, ms(lag))
		}
	}
	step("measured")
	if verbose && len(res.failures) > 0 {
		fmt.Fprintf(os.Stderr, "#   not 2xx: %s\n", res.failureList())
	}
	if p != nil {
		cpu1, err := p.cpuTime(c.hz)
		if err == nil && cpuErr == nil && !p.exited() {
			res.cpu = cpu1 - cpu0
		}
		if p.exited() {
			return result{}, fmt.Errorf("%s ended during the run:\n%s", px.name, p.tail())
		}
	}
	return res, nil
}
