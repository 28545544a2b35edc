package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A sample is one request of the measured window.
type sample struct {
	latency time.Duration // from when it was due to be sent, for an open loop
	status  int           // 0: no answer (an error or the client's timeout)
	backend int           // X-Backend of the answer, -1 if none
	// why is, for a request not answered 2xx, what it got: the status
	// and the first line of the body ("503 service overloaded"), or the
	// error ("no answer: timeout").
	why string
}

// A result is one line of the table.
type result struct {
	proxy, scenario string
	window          time.Duration  // the measured window's length
	n               int            // requests sent in the window
	answered        int            // with an HTTP answer, whatever its status
	ok              int            // with a 2xx answer
	p50, p90, p99   time.Duration  // over every request, answered or not
	b0              float64        // backend 0's share of the answers that name a backend; NaN if unknown
	cpu             time.Duration  // the proxy's CPU time in the window; -1 if none
	failures        map[string]int // the requests not answered 2xx, by why; nil from wrk
}

// summarize makes the result of the samples of a window of length w.
func summarize(proxyName, scenarioName string, w time.Duration, samples []sample) result {
	r := result{proxy: proxyName, scenario: scenarioName, window: w, n: len(samples), cpu: -1, b0: math.NaN(), failures: map[string]int{}}
	lat := make([]time.Duration, 0, len(samples))
	named, first := 0, 0
	for _, s := range samples {
		lat = append(lat, s.latency)
		if s.why != "" {
			r.failures[s.why]++
		}
		if s.status != 0 {
			r.answered++
		}
		if s.status >= 200 && s.status < 300 {
			r.ok++
		}
		if s.backend >= 0 {
			named++
			if s.backend == 0 {
				first++
			}
		}
	}
	slices.Sort(lat)
	r.p50, r.p90, r.p99 = percentile(lat, 50), percentile(lat, 90), percentile(lat, 99)
	if named > 0 {
		r.b0 = float64(first) / float64(named)
	}
	return r
}

// failureList lists r.failures, the most frequent first.
func (r result) failureList() string {
	whys := slices.Collect(maps.Keys(r.failures))
	slices.SortFunc(whys, func(a, b string) int { return cmp.Or(r.failures[b]-r.failures[a], strings.Compare(a, b)) })
	var b strings.Builder
	for i, w := range whys {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%d x %q", r.failures[w], w)
	}
	return b.String()
}

// percentile returns the q-th percentile of sorted (nearest rank), 0 if
// it is empty.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// rps is the answers per second; okRPS the 2xx answers per second.
func (r result) rps() float64   { return float64(r.answered) / r.window.Seconds() }
func (r result) okRPS() float64 { return float64(r.ok) / r.window.Seconds() }

// okShare is the share of the requests answered 2xx.
func (r result) okShare() float64 {
	if r.n == 0 {
		return 0
	}
	return float64(r.ok) / float64(r.n)
}

// cpuPerRequest is the proxy's CPU time per request sent, in
// microseconds; NaN if unknown.
func (r result) cpuPerRequest() float64 {
	if r.cpu < 0 || r.n == 0 {
		return math.NaN()
	}
	return float64(r.cpu.Microseconds()) / float64(r.n)
}

const header = "proxy       scenario     req/s     ok/s     p50ms     p90ms     p99ms      ok%    b0%   cpu_us        n"

// line formats r as a row of the table under header.
func (r result) line() string {
	return fmt.Sprintf("%-11s %-9s %8.0f %8.0f %9.3f %9.3f %9.3f %8.3f %6s %8s %8d",
		r.proxy, r.scenario, r.rps(), r.okRPS(), ms(r.p50), ms(r.p90), ms(r.p99),
		100*r.okShare(), orDash(100*r.b0, "%.1f"), orDash(r.cpuPerRequest(), "%.1f"), r.n)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func orDash(v float64, format string) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

// wrkScript is the Lua script given to wrk: its done() prints the
// summary as one line of key=value pairs, so that nothing is read from
// wrk's rounded human output. Latencies are in microseconds.
const wrkScript = `done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("wrk: requests=%d duration=%d status=%d connect=%d read=%d write=%d timeout=%d p50=%d p90=%d p99=%d\n",
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99)))
end
`

// parseWrk reads the line of wrkScript's done() out of wrk's output and
// makes the result of it. A socket error (a connection refused, a read or
// a write that failed, a request timed out) is counted as a request sent
// and not answered; its latency, which wrk does not record, is not in the
// percentiles.
func parseWrk(proxyName, scenarioName string, out io.Reader) (result, error) {
	data, err := io.ReadAll(out)
	if err != nil {
		return result{}, err
	}
	var line string
	for l := range strings.Lines(string(data)) {
		if strings.HasPrefix(l, "wrk: ") {
			line = strings.TrimSpace(strings.TrimPrefix(l, "wrk: "))
		}
	}
	if line == "" {
		return result{}, fmt.Errorf("wrk printed no summary line:\n%s", data)
	}
	v := map[string]int64{}
	for f := range strings.FieldsSeq(line) {
		k, s, ok := strings.Cut(f, "=")
		n, err := strconv.ParseInt(s, 10, 64)
		if !ok || err != nil {
			return result{}, fmt.Errorf("wrk summary: bad field %q", f)
		}
		v[k] = n
	}
	for _, k := range []string{"requests", "duration", "status", "connect", "read", "write", "timeout", "p50", "p90", "p99"} {
		if _, ok := v[k]; !ok {
			return result{}, fmt.Errorf("wrk summary: no %s in %q", k, line)
		}
	}
	us := func(k string) time.Duration { return time.Duration(v[k]) * time.Microsecond }
	r := result{
		proxy: proxyName, scenario: scenarioName, window: us("duration"),
		answered: int(v["requests"]), ok: int(v["requests"] - v["status"]),
		p50: us("p50"), p90: us("p90"), p99: us("p99"), b0: math.NaN(), cpu: -1,
	}
	r.n = r.answered + int(v["connect"]+v["read"]+v["write"]+v["timeout"])
	if r.window <= 0 {
		return result{}, fmt.Errorf("wrk summary: duration %d", v["duration"])
	}
	return r, nil
}
