package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A run is one cell's load: warmup, then the measured window, against
// targets (one URL through a proxy; the backends themselves, in turn,
// for the direct rows).
type run struct {
	targets []string
	warmup  time.Duration
	window  time.Duration
	timeout time.Duration // a request not answered by then is a failure
	// atWindow is called when the measured window starts; atEvents at
	// the scenario's events, in their goroutine.
	atWindow func()
	events   []event
	atEvent  func(event)
}

// openLoop sends rate requests per second for r.warmup+r.window, each at
// its time whatever happened to those before it (as wrk2 and vegeta do),
// and returns the samples of those due in the window, once they are all
// answered or timed out, with the lag of the sending itself: how late
// after its time, at the 99th percentile, a request was handed to a
// connection. Its latency counts from when it was due, so a late sender
// shows in it rather than hiding the proxy's delays.
//
// A request goes to a connection that is idle, or to a new one if none
// is, so that slow answers never hold the next requests back: each
// connection has a goroutine of its own, which sends one request at a
// time and reads its answer.
func openLoop(r run, rate float64) ([]sample, time.Duration) {
	total := int((r.warmup + r.window).Seconds() * rate)
	first := int(r.warmup.Seconds() * rate)
	samples := make([]sample, total)
	lags := make([]time.Duration, total)
	interval := time.Duration(float64(time.Second) / rate)
	type job struct {
		i   int
		due time.Time
	}
	// work[t] hands a job to an idle connection to target t; it is
	// unbuffered, so a send succeeds only if one is waiting.
	work := make([]chan job, len(r.targets))
	for t := range work {
		work[t] = make(chan job)
	}
	var wg sync.WaitGroup
	t0 := time.Now()
	stopEvents := r.schedule(t0)
	defer stopEvents()
	for i := range total {
		due := t0.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		t := i % len(r.targets)
		j := job{i: i, due: due}
		select {
		case work[t] <- j:
		default:
			wg.Go(func() {
				c := newConn(r.targets[t], r.timeout)
				defer c.close()
				for ; ; j = <-work[t] {
					if j.due.IsZero() {
						return // closed
					}
					samples[j.i] = c.get(j.due)
				}
			})
		}
		lags[i] = time.Since(due)
	}
	for _, w := range work {
		close(w)
	}
	wg.Wait()
	lags = lags[first:]
	slices.Sort(lags)
	return samples[first:], percentile(lags, 99)
}

// closedLoop keeps conns requests in flight for r.warmup+r.window, each
// connection sending its next request when its answer came, and returns
// the samples of those sent in the window. It stands in for wrk where
// wrk is not installed.
func closedLoop(r run, conns int) []sample {
	t0 := time.Now()
	start, end := t0.Add(r.warmup), t0.Add(r.warmup+r.window)
	stopEvents := r.schedule(t0)
	defer stopEvents()
	per := make([][]sample, conns)
	var wg sync.WaitGroup
	for k := range conns {
		wg.Go(func() {
			c := newConn(r.targets[k%len(r.targets)], r.timeout)
			defer c.close()
			for {
				now := time.Now()
				if now.After(end) {
					return
				}
				s := c.get(now)
				if !now.Before(start) {
					per[k] = append(per[k], s)
				}
			}
		})
	}
	wg.Wait()
	return slices.Concat(per...)
}

// A conn is the load generator's HTTP/1.1 client on one connection, kept
// alive, one request at a time: cheaper than net/http's client, which
// hands each request between goroutines, so that the generator takes as
// little as it can of the cores it shares with the proxy.
type conn struct {
	addr    string
	req     []byte
	timeout time.Duration
	c       net.Conn
	br      *bufio.Reader
}

// newConn returns a conn for GETs of target, an http://host:port/ URL;
// it connects on its first request.
func newConn(target string, timeout time.Duration) *conn {
	u, err := url.Parse(target)
	if err != nil {
		panic(err)
	}
	req := "GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: proxybench\r\n\r\n"
	return &conn{addr: u.Host, req: []byte(req), timeout: timeout}
}

// get sends a GET and returns its sample; the latency is from due. A
// request whose connection, used before, turns out closed (EOF or a
// reset before any of the answer came) is sent again once on a new one,
// as net/http does: the server may close a connection while it is idle.
func (c *conn) get(due time.Time) sample {
	reused := c.c != nil
	s, closed := c.try()
	if closed && reused {
		s, _ = c.try()
	}
	s.latency = time.Since(due)
	return s
}

// try sends the request once; closed says it failed because the
// connection was closed before any of the answer came.
func (c *conn) try() (s sample, closed bool) {
	s.backend = -1
	if c.c == nil {
		nc, err := net.DialTimeout("tcp", c.addr, c.timeout)
		if err != nil {
			s.why = noAnswer(err)
			return s, false
		}
		c.c, c.br = nc, bufio.NewReaderSize(nc, 4096)
	}
	c.c.SetDeadline(time.Now().Add(c.timeout))
	_, err := c.c.Write(c.req)
	if err == nil {
		_, err = c.br.Peek(1)
	}
	if err != nil {
		c.close()
		s.why = noAnswer(err)
		return s, errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
	}
	res, err := http.ReadResponse(c.br, nil)
	var first []byte
	if err == nil {
		if res.StatusCode/100 != 2 {
			first, err = io.ReadAll(io.LimitReader(res.Body, 80))
		}
		if err == nil {
			_, err = io.Copy(io.Discard, res.Body)
		}
		res.Body.Close()
	}
	if err != nil {
		c.close()
		s.why = noAnswer(err)
		return s, false
	}
	s.status = res.StatusCode
	if b, err := strconv.Atoi(res.Header.Get("X-Backend")); err == nil {
		s.backend = b
	}
	if res.StatusCode/100 != 2 {
		code, line := strconv.Itoa(res.StatusCode), firstLine(first)
		if !strings.HasPrefix(line, code) {
			line = strings.TrimSpace(code + " " + line)
		}
		s.why = line
	}
	if res.Close {
		c.close()
	}
	return s, false
}

// firstLine returns the first line of text of an error page, its HTML
// tags left out: "502 Bad Gateway" of nginx's.
func firstLine(body []byte) string {
	for l := range strings.Lines(tags.ReplaceAllString(string(body), "\n")) {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

var tags = regexp.MustCompile(`<[^>]*>`)

// noAnswer says why a request got no answer, in a few words.
func noAnswer(err error) string {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return "no answer: timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "no answer: connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "no answer: connection reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "no answer: connection closed"
	}
	return "no answer: " + err.Error()
}

func (c *conn) close() {
	if c.c != nil {
		c.c.Close()
		c.c, c.br = nil, nil
	}
}

// schedule calls r.atWindow when the window starts and r.atEvent at each
// event, counting from t0, until the returned function is called.
func (r run) schedule(t0 time.Time) func() {
	var timers []*time.Timer
	if r.atWindow != nil {
		timers = append(timers, time.AfterFunc(time.Until(t0.Add(r.warmup)), r.atWindow))
	}
	for _, e := range r.events {
		at := r.warmup + time.Duration(e.at*float64(r.window))
		timers = append(timers, time.AfterFunc(time.Until(t0.Add(at)), func() { r.atEvent(e) }))
	}
	return func() {
		for _, t := range timers {
			t.Stop()
		}
	}
}

// wrk runs wrk closed-loop on url with conns connections on 2 threads:
// first for the warmup, then for the window, calling atWindow between
// the two, and returns its result for the window.
func runWrk(bin, dir string, r run, conns int, proxyName, scenarioName string) (result, error) {
	script := filepath.Join(dir, "summary.lua")
	if err := os.WriteFile(script, []byte(wrkScript), 0o644); err != nil {
		return result{}, err
	}
	wrk := func(d time.Duration) ([]byte, error) {
		secs := max(1, int(d.Round(time.Second).Seconds()))
		cmd := exec.Command(bin, "-t2", fmt.Sprintf("-c%d", conns), fmt.Sprintf("-d%ds", secs),
			fmt.Sprintf("--timeout=%ds", max(1, int(r.timeout.Seconds()))), "-s", script, r.targets[0])
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.Bytes(), err
	}
	if r.warmup > 0 {
		if out, err := wrk(r.warmup); err != nil {
			return result{}, fmt.Errorf("wrk: %w\n%s", err, out)
		}
	}
	if r.atWindow != nil {
		r.atWindow()
	}
	out, err := wrk(r.window)
	if err != nil {
		return result{}, fmt.Errorf("wrk: %w\n%s", err, out)
	}
	return parseWrk(proxyName, scenarioName, bytes.NewReader(out))
}

// control posts query to a backend's /_ctl.
func control(ctx context.Context, addr, query string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/_ctl?"+query, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return errors.New(res.Status)
	}
	return nil
}
