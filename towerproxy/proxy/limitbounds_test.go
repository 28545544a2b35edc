package proxy_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// The backend of TestUpstreamLimitOver200 runs in a process of its own,
// as a proxy's backends do: in the test's process the load would slow it
// with the proxy, and the limit would rightly read that as a slower
// backend. The test binary serves as that process when this variable is
// set: it prints its address and serves until its standard input closes.
const backendProcess = "TOWERPROXY_TEST_BACKEND_PROCESS"

func TestMain(m *testing.M) {
	if os.Getenv(backendProcess) != "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(ln.Addr())
		go http.Serve(ln, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startBackendProcess starts the test binary as a backend that answers
// every request at once, and returns its URL. It ends with the test.
func startBackendProcess(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), backendProcess+"=1", "GOMAXPROCS=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(waitFor):
			cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the backend process: %v", err)
	}
	return "http://" + strings.TrimSpace(line)
}

// An upstream's limit is not held under 200, the adaptive package's
// default bound: in front of fast backends a proxy may have many more
// requests in flight, and a limit held under them would shed the rest
// after its patience, with the backends idle. 300 clients in a closed
// loop take it past 200.
func TestUpstreamLimitOver200(t *testing.T) {
	s := startObserved(t, "access_log: off\nroutes: [{path: /, upstream: web}]\nupstreams:\n  web: {backends: ["+startBackendProcess(t)+"]}\n", nil)
	reg := s.p.Registry()
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 300}}
	t.Cleanup(c.CloseIdleConnections)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 300 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if res, err := c.Get(s.front.URL + "/"); err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			}
		})
	}
	over := within(waitFor, func() bool {
		return value(t, reg, "towerproxy_upstream_limit", "upstream", "web") > 200
	})
	close(stop)
	wg.Wait()
	if !over {
		t.Errorf("the upstream's limit stayed at %v, want over 200", value(t, reg, "towerproxy_upstream_limit", "upstream", "web"))
	}
}
