package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A process is a program the benchmark started: a backend or a proxy. It
// runs in a process group of its own, so that stopping it stops the
// children it made (nginx's workers) and nothing else.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// running are the processes started and not yet stopped, so that an
// interrupted run stops them all.
var running struct {
	mu sync.Mutex
	m  map[*process]bool
}

// start starts argv with env added to the benchmark's own, its output
// to a log file in dir.
func start(name, dir string, argv, env []string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	// An access log on stdout, towerproxy's default, costs the proxy
	// its formatting and a write each request; /dev/null keeps the cost
	// and not the gigabytes.
	cmd.Stdout = nil
	cmd.Stderr = f
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	running.mu.Lock()
	if running.m == nil {
		running.m = map[*process]bool{}
	}
	running.m[p] = true
	running.mu.Unlock()
	return p, nil
}

// exited reports whether p has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill ends p's group at once (SIGKILL) and waits for p.
func (p *process) kill() {
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
	p.forget()
}

// stop asks p's group to end (SIGTERM), and kills it if it has not
// within grace.
func (p *process) stop(grace time.Duration) {
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
		// nginx's workers may outlive their master by a moment.
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		p.forget()
	case <-time.After(grace):
		p.kill()
	}
}

func (p *process) forget() {
	running.mu.Lock()
	delete(running.m, p)
	running.mu.Unlock()
}

// stopAll kills every process still running.
func stopAll() {
	running.mu.Lock()
	ps := make([]*process, 0, len(running.m))
	for p := range running.m {
		ps = append(ps, p)
	}
	running.mu.Unlock()
	for _, p := range ps {
		p.kill()
	}
}

// tail returns the end of p's log, for an error message.
func (p *process) tail() string {
	data, _ := os.ReadFile(p.log)
	if len(data) > 2000 {
		data = data[len(data)-2000:]
	}
	return strings.TrimSpace(string(data))
}

// cpuTime returns the CPU time (user and system) that p and its children
// have used so far, read from /proc/<pid>/stat, in ticks of 1/hz s.
func (p *process) cpuTime(hz int) (time.Duration, error) {
	pids, err := group(p.cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	var ticks int64
	for _, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // gone meanwhile
		}
		st, err := parseStat(string(data))
		if err != nil {
			return 0, err
		}
		ticks += st.utime + st.stime
	}
	return time.Duration(ticks) * time.Second / time.Duration(hz), nil
}

// group returns pid and its descendants.
func group(pid int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	children := map[int][]int{}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if st, err := parseStat(string(data)); err == nil {
			children[st.ppid] = append(children[st.ppid], n)
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out, nil
}

// stat is what the benchmark reads of /proc/<pid>/stat.
type stat struct {
	ppid         int
	utime, stime int64 // in clock ticks
}

// parseStat reads a /proc/<pid>/stat line. The command's name, field 2,
// is in parentheses and may hold spaces and parentheses itself, so the
// fields are counted from the last ')'.
func parseStat(s string) (stat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return stat{}, errors.New("stat: no command name")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
	if len(f) < 13 {
		return stat{}, fmt.Errorf("stat: %d fields after the name", len(f))
	}
	var st stat
	var err error
	if st.ppid, err = strconv.Atoi(f[1]); err != nil {
		return stat{}, fmt.Errorf("stat: ppid: %w", err)
	}
	if st.utime, err = strconv.ParseInt(f[11], 10, 64); err != nil {
		return stat{}, fmt.Errorf("stat: utime: %w", err)
	}
	if st.stime, err = strconv.ParseInt(f[12], 10, 64); err != nil {
		return stat{}, fmt.Errorf("stat: stime: %w", err)
	}
	return st, nil
}

// freePorts returns n loopback addresses free now.
func freePorts(n int) ([]string, error) {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	addrs := make([]string, n)
	for i := range addrs {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		addrs[i] = ln.Addr().String()
	}
	return addrs, nil
}

// waitHTTP waits until url answers anything over HTTP, or p ends, or
// timeout passes.
func waitHTTP(p *process, url string, timeout time.Duration) error {
	c := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for {
		res, err := c.Get(url)
		if err == nil {
			res.Body.Close()
			return nil
		}
		if p != nil && p.exited() {
			return fmt.Errorf("%s ended at start:\n%s", p.name, p.tail())
		}
		if time.Now().After(deadline) {
			msg := ""
			if p != nil {
				msg = "\n" + p.tail()
			}
			return fmt.Errorf("%s did not answer within %v: %w%s", url, timeout, err, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
