package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The command itself, built once for the tests that send it signals.
var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// build builds the towerproxy command into a temporary directory, once.
func build(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "towerproxy-test")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "towerproxy")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", "build", "-race", "-o", binary, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binary != "" {
		os.RemoveAll(filepath.Dir(binary))
	}
	os.Exit(code)
}

// process is the command running with a configuration file.
type process struct {
	cmd         *exec.Cmd
	addr, admin string
	log         *syncBuffer
	exited      chan error
}

// syncBuffer is the command's stderr, kept for the test to read.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var listening = regexp.MustCompile(`msg="proxy: listening" addr=(\S+) admin=(true|false)`)

// start runs the command with the configuration file conf, and waits
// (10s at most) until it says where it listens. The process is killed
// when the test ends, if it is still running.
func start(t *testing.T, conf string) *process {
	t.Helper()
	cmd := exec.Command(build(t), "-config", conf)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, log: &syncBuffer{}, exited: make(chan error, 1)}
	found := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(p.log, line)
			if m := listening.FindStringSubmatch(line); m != nil {
				if m[2] == "true" {
					p.admin = m[1]
				} else {
					p.addr = m[1]
				}
				if p.addr != "" && p.admin != "" {
					close(found)
				}
			}
		}
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
		}
		if t.Failed() {
			t.Logf("the proxy's log:\n%s", p.log.String())
		}
	})
	select {
	case <-found:
	case err := <-p.exited:
		t.Fatalf("the proxy exited before listening: %v\n%s", err, p.log.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the proxy did not listen within 30s:\n%s", p.log.String())
	}
	return p
}

// signal sends sig to the process.
func (p *process) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// wait waits for the process to exit, 20s at most, and returns its
// error.
func (p *process) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.exited:
		p.exited <- err
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("the proxy did not exit within 20s")
		return nil
	}
}

// writeConfig writes the YAML configuration whose only upstream has the
// backends, to path, atomically (a rename): the proxy never reads half a
// file.
//
// The limits are off: on this loaded machine the adaptive limits shed a
// few of six clients' requests to idle backends even without a reload
// (their probes of the no-load latency), which would hide what reloads
// do. That a reload keeps an upstream's limit is TestReloadKeepsLimit's.
func writeConfig(t *testing.T, path string, backends ...string) {
	t.Helper()
	writeConfigYAML(t, path, fmt.Sprintf("listen: 127.0.0.1:0\nadmin: 127.0.0.1:0\naccess_log: off\nserver: {drain_timeout: 15s}\nadmission: {limit: off}\nroutes: [{path: /, upstream: app}]\nupstreams:\n  app:\n    backends: [%s]\n    limit: off\n", strings.Join(backends, ", ")))
}

// writeConfigYAML writes conf to path atomically.
func writeConfigYAML(t *testing.T, path, conf string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// named is a backend that answers its name; a request to /slow waits
// until release is closed (10s at most).
func named(t *testing.T, name string, arrived *sync.WaitGroup, release <-chan struct{}) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			arrived.Done()
			select {
			case <-release:
			case <-time.After(10 * time.Second):
			}
		}
		io.WriteString(w, name)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newClient(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 15 * time.Second}
}

// SIGTERM drains the proxy: /healthz answers 503 at once, new
// connections are refused, the requests in flight finish with their
// whole answers, and the process exits 0.
func TestSIGTERMDrains(t *testing.T) {
	var arrived sync.WaitGroup
	release := make(chan struct{})
	backend := named(t, "a", &arrived, release)
	conf := filepath.Join(t.TempDir(), "proxy.yaml")
	// No limits: ten requests at once to a fresh proxy are what the test
	// needs, not what its limits would let through while they learn.
	writeConfigYAML(t, conf, fmt.Sprintf("listen: 127.0.0.1:0\nadmin: 127.0.0.1:0\naccess_log: off\nserver: {drain_timeout: 15s}\nadmission: {limit: off}\nroutes: [{path: /, upstream: app}]\nupstreams:\n  app: {backends: [%s], limit: off}\n", backend.URL))
	p := start(t, conf)
	c := newClient(t)

	if res, err := c.Get("http://" + p.admin + "/healthz"); err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz before the drain: %v %v, want 200", res, err)
	}
	const inFlight = 10
	arrived.Add(inFlight)
	results := make(chan string, inFlight)
	for range inFlight {
		go func() {
			res, err := c.Get("http://" + p.addr + "/slow")
			if err != nil {
				results <- err.Error()
				return
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			results <- fmt.Sprint(res.StatusCode, " ", string(b), " ", err)
		}()
	}
	waitGroup(t, &arrived, "the requests reaching the backend")
	p.signal(t, syscall.SIGTERM)

	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := c.Get("http://" + p.admin + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 503 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("healthz did not answer 503 within 10s of SIGTERM: %v %v", res, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for {
		conn, err := net.DialTimeout("tcp", p.addr, time.Second)
		if err != nil {
			break // refused: the listener is closed
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatalf("new connections were still accepted 10s after SIGTERM")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-p.exited:
		t.Fatalf("the proxy exited with requests in flight: %v", err)
	default:
	}
	close(release)
	for range inFlight {
		if got := <-results; got != "200 a <nil>" {
			t.Errorf("an in-flight request got %q, want 200 a", got)
		}
	}
	if err := p.wait(t); err != nil {
		t.Errorf("the proxy exited with %v, want 0", err)
	}
}

// waitGroup waits for wg, failing the test after 10s.
func waitGroup(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not happen within 10s", what)
	}
}

// Reloads, on SIGHUP and on a change of the file, under a steady load,
// drop and refuse no request: the load moves between two backends and
// back, and a file that does not load leaves the configuration in force.
func TestReloadUnderLoadLosesNothing(t *testing.T) {
	var arrived sync.WaitGroup
	release := make(chan struct{})
	defer close(release)
	a, b := named(t, "a", &arrived, release), named(t, "b", &arrived, release)
	conf := filepath.Join(t.TempDir(), "proxy.yaml")
	writeConfig(t, conf, a.URL)
	p := start(t, conf)
	c := newClient(t)

	var total, failed atomic.Int64
	var counting atomic.Bool
	var served sync.Map // backend name -> true
	var firstFailure atomic.Value
	stop := make(chan struct{})
	var clients sync.WaitGroup
	for range 6 {
		clients.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				counted := counting.Load()
				fail := func(what string) {
					if counted {
						failed.Add(1)
						firstFailure.CompareAndSwap(nil, what)
					}
				}
				if counted {
					total.Add(1)
				}
				res, err := c.Get("http://" + p.addr + "/")
				if err != nil {
					fail(err.Error())
					continue
				}
				body, err := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != 200 || err != nil {
					fail(fmt.Sprint(res.StatusCode, " ", string(body), " ", err))
					continue
				}
				served.Store(string(body), true)
			}
		})
	}
	settle := func() { time.Sleep(150 * time.Millisecond) }
	time.Sleep(200 * time.Millisecond) // the clients' connections are open
	counting.Store(true)
	for i := range 10 {
		if i%2 == 0 {
			writeConfig(t, conf, b.URL)
		} else {
			writeConfig(t, conf, a.URL, b.URL)
		}
		p.signal(t, syscall.SIGHUP)
		settle()
	}
	// A file that does not load: the configuration in force stays.
	os.WriteFile(conf, []byte("routes: [\n"), 0o600)
	p.signal(t, syscall.SIGHUP)
	settle()
	// A change of the file alone, without a signal, is read within the
	// second.
	served.Clear()
	writeConfig(t, conf, a.URL)
	deadline := time.Now().Add(10 * time.Second)
	for {
		time.Sleep(100 * time.Millisecond)
		served.Clear()
		time.Sleep(200 * time.Millisecond)
		_, sawA := served.Load("a")
		_, sawB := served.Load("b")
		if sawA && !sawB {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the change of the file was not taken within 10s")
		}
	}
	close(stop)
	clients.Wait()
	if failed.Load() != 0 {
		t.Errorf("%d of %d requests failed across the reloads, want none; the first: %v", failed.Load(), total.Load(), firstFailure.Load())
	}
	if total.Load() < 100 {
		t.Errorf("only %d requests were sent, too few to tell", total.Load())
	}
	// Signals that come while a reload runs are one (signal.Notify), so
	// fewer than the 11 changes may be logged.
	if n := strings.Count(p.log.String(), "configuration reloaded"); n < 6 {
		t.Errorf("the proxy logged %d reloads, want 6 or more", n)
	}
	if !strings.Contains(p.log.String(), "reload failed") {
		t.Errorf("the proxy did not report the file that does not load")
	}
	p.signal(t, syscall.SIGTERM)
	if err := p.wait(t); err != nil {
		t.Errorf("the proxy exited with %v, want 0", err)
	}
}
