package main

import (
	"strings"
	"testing"
	"time"
)

// row makes a result of n requests of which ok were 2xx over 10 s, with
// the given p99 and CPU time.
func row(px, sc string, n, ok int, p99, cpu time.Duration) result {
	return result{proxy: px, scenario: sc, window: 10 * time.Second, n: n, answered: n, ok: ok, p99: p99, cpu: cpu}
}

func TestJudge(t *testing.T) {
	ms := time.Millisecond
	rs := results{}
	for _, r := range []result{
		row("nginx", "overhead", 200000, 200000, 7*ms, 7*time.Second), // 35 us per request
		row("towerproxy", "overhead", 180000, 180000, 9*ms, 9*time.Second),
		row("direct", "fixed5ms", 10000, 10000, 6500*time.Microsecond, -1),
		row("towerproxy", "fixed5ms", 10000, 10000, 7600*time.Microsecond, time.Second),
		row("towerproxy", "slow1", 4000, 4000, 3900*time.Microsecond, time.Second),
		row("towerproxy", "err1", 5000, 5000, 3*ms, time.Second),
		row("towerproxy", "kill1", 5000, 4999, 3*ms, time.Second),
		row("towerproxy", "overload", 32000, 15300, 33*ms, time.Second), // 1530/s
		row("towerproxy", "drop", 14400, 13000, 21*ms, time.Second),
	} {
		rs[[2]string{r.proxy, r.scenario}] = r
	}
	got := map[string]string{}
	for _, v := range judge(rs, "towerproxy") {
		key := v.scenario
		for _, what := range []string{"req/s", "CPU", "success", "goodput", "p99"} {
			if strings.Contains(v.text, what) {
				key += " " + what
				break
			}
		}
		got[key] = v.state
	}
	want := map[string]string{
		"overhead req/s":   "missed", // 0.90x: above the floor, below the target
		"overhead CPU":     "met",    // 50 us against 35: 1.43x
		"overhead success": "met",
		"fixed5ms p99":     "missed", // 1.1 ms over direct
		"slow1 p99":        "met",
		"err1 success":     "met",
		"kill1 success":    "missed", // 4999 of 5000 is 99.98%
		"overload goodput": "met",    // 1530/s is 95.6% of 1600
		"drop goodput":     "-",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: got %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d verdicts %v, want %d", len(got), got, len(want))
	}
}

func TestJudgeFloorAndUnknown(t *testing.T) {
	rs := results{}
	rs[[2]string{"nginx", "overhead"}] = row("nginx", "overhead", 100, 100, 0, time.Millisecond)
	rs[[2]string{"towerproxy", "overhead"}] = row("towerproxy", "overhead", 70, 70, 0, time.Millisecond)
	vs := judge(rs, "towerproxy")
	if !strings.Contains(vs[0].text, "below the floor") {
		t.Errorf("0.70x: got %q, want it below the floor", vs[0].text)
	}
	unknown := 0
	for _, v := range vs {
		if v.state == "unknown" {
			unknown++
		}
	}
	if unknown != 6 { // fixed5ms, slow1, err1, kill1, overload, drop
		t.Errorf("got %d unknown verdicts, want 6: %+v", unknown, vs)
	}
}

// With a direct row in overload, the backends kept busy with no proxy,
// goodput is judged against what they served if that is less than the
// nominal 1600/s, and the text gives both shares.
func TestJudgeOverloadAgainstDirect(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name   string
		direct int // ok answers of the direct row in 10 s; 0: no row
		want   string
		text   string
	}{
		{"no direct row", 0, "missed", "92.7% of the 1600/s served at most"},
		{"backends slower than nominal", 14880, "met", "99.7% of the 1488/s the backends served kept busy directly (92.7% of the nominal 1600/s)"},
		{"backends at nominal", 16500, "missed", "92.7% of the 1600/s served at most"},
	} {
		rs := results{}
		add := func(r result) { rs[[2]string{r.proxy, r.scenario}] = r }
		add(row("towerproxy", "overload", 32000, 14830, 32*ms, time.Second))
		if c.direct > 0 {
			add(row("direct", "overload", c.direct, c.direct, 40*ms, -1))
		}
		for _, v := range judge(rs, "towerproxy") {
			if v.scenario != "overload" {
				continue
			}
			if v.state != c.want || !strings.Contains(v.text, c.text) {
				t.Errorf("%s: %s %q, want %s and %q", c.name, v.state, v.text, c.want, c.text)
			}
		}
	}
}
