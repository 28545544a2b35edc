package main

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		d := make([]time.Duration, len(v))
		for i, x := range v {
			d[i] = time.Duration(x) * time.Millisecond
		}
		return d
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{"empty", nil, 99, 0},
		{"one", ms(7), 50, 7 * time.Millisecond},
		{"p50 of 4", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p99 of 4", ms(1, 2, 3, 4), 99, 4 * time.Millisecond},
		{"p90 of 100", ms(hundred...), 90, 90 * time.Millisecond},
		{"p99 of 100", ms(hundred...), 99, 99 * time.Millisecond},
		{"p0", ms(1, 2, 3), 0, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.q); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	samples := []sample{
		{latency: 4 * time.Millisecond, status: 200, backend: 0},
		{latency: 1 * time.Millisecond, status: 200, backend: 1},
		{latency: 2 * time.Millisecond, status: 503, backend: 0, why: "503 failing"},
		{latency: 2 * time.Second, status: 0, backend: -1, why: "no answer: timeout"},
		{latency: 3 * time.Millisecond, status: 503, backend: -1, why: "503 failing"},
	}
	r := summarize("p", "s", 2*time.Second, samples)
	if r.n != 5 || r.answered != 4 || r.ok != 2 {
		t.Errorf("n, answered, ok: got %d, %d, %d, want 5, 4, 2", r.n, r.answered, r.ok)
	}
	if r.p50 != 3*time.Millisecond || r.p99 != 2*time.Second {
		t.Errorf("p50, p99: got %v, %v, want 3ms, 2s", r.p50, r.p99)
	}
	if want := 2.0 / 3; math.Abs(r.b0-want) > 1e-9 {
		t.Errorf("b0: got %v, want %v", r.b0, want)
	}
	if r.rps() != 2 || r.okRPS() != 1 || r.okShare() != 0.4 {
		t.Errorf("rps, okRPS, okShare: got %v, %v, %v, want 2, 1, 0.4", r.rps(), r.okRPS(), r.okShare())
	}
	if got, want := r.failureList(), `2 x "503 failing"; 1 x "no answer: timeout"`; got != want {
		t.Errorf("failureList: got %s, want %s", got, want)
	}
	if !math.IsNaN(r.cpuPerRequest()) {
		t.Errorf("cpuPerRequest with no CPU time: got %v, want NaN", r.cpuPerRequest())
	}
	r.cpu = 500 * time.Microsecond
	if r.cpuPerRequest() != 100 {
		t.Errorf("cpuPerRequest: got %v, want 100", r.cpuPerRequest())
	}
	if f := strings.Fields(r.line()); len(f) != len(strings.Fields(header)) {
		t.Errorf("line has %d fields, header %d: %q", len(f), len(strings.Fields(header)), r.line())
	}
}

// wrkOutput is what wrk 4.1 prints with wrkScript, its summary line
// included.
const wrkOutput = `Running 10s test @ http://127.0.0.1:8080/
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.61ms    1.02ms  20.00ms   75.00%
    Req/Sec    10.46k   500.00    11.00k    70.00%
  208216 requests in 10.00s, 30.00MB read
  Socket errors: connect 0, read 3, write 0, timeout 2
  Non-2xx or 3xx responses: 16
Requests/sec:  20822.00
Transfer/sec:      3.00MB
wrk: requests=208216 duration=10000412 status=16 connect=0 read=3 write=0 timeout=2 p50=2610 p90=4640 p99=7290
`

func TestParseWrk(t *testing.T) {
	r, err := parseWrk("nginx", "overhead", strings.NewReader(wrkOutput))
	if err != nil {
		t.Fatal(err)
	}
	want := result{proxy: "nginx", scenario: "overhead", window: 10000412 * time.Microsecond,
		n: 208221, answered: 208216, ok: 208200,
		p50: 2610 * time.Microsecond, p90: 4640 * time.Microsecond, p99: 7290 * time.Microsecond, cpu: -1}
	r.b0, want.b0 = 0, 0 // NaN is not equal to itself
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got %+v, want %+v", r, want)
	}
	for _, tt := range []struct{ name, out, err string }{
		{"no summary", "Running 10s test\n", "no summary line"},
		{"bad field", "wrk: requests=x\n", "bad field"},
		{"missing field", "wrk: requests=1 duration=1\n", "no status"},
		{"no duration", "wrk: requests=0 duration=0 status=0 connect=0 read=0 write=0 timeout=0 p50=0 p90=0 p99=0\n", "duration 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseWrk("p", "s", strings.NewReader(tt.out))
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("got %v, want an error with %q", err, tt.err)
			}
		})
	}
}

// The script prints every field parseWrk needs, in the form it reads.
func TestWrkScriptFields(t *testing.T) {
	for _, k := range []string{"requests", "duration", "status", "connect", "read", "write", "timeout", "p50", "p90", "p99"} {
		if !strings.Contains(wrkScript, " "+k+"=%d") {
			t.Errorf("wrkScript does not print %s", k)
		}
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		line string
		want stat
		err  bool
	}{
		{"nginx", "4242 (nginx) S 4241 4241 4241 0 -1 4194624 900 0 0 0 123 45 0 0 20 0 1 0 100 0 0", stat{ppid: 4241, utime: 123, stime: 45}, false},
		{"name with spaces and parens", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 9 8 0 0", stat{ppid: 1, utime: 9, stime: 8}, false},
		{"short", "7 (x) R 1 7", stat{}, true},
		{"no name", "7 x R 1", stat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat(tt.line)
			if (err != nil) != tt.err || got != tt.want {
				t.Errorf("got %+v, %v, want %+v, error %v", got, err, tt.want, tt.err)
			}
		})
	}
}
