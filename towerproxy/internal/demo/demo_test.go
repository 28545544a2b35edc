package demo

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The demonstration, shortened, on the real clock over loopback: its table
// has a line for each proxy, and towerproxy serves more within the
// clients' timeout than the bare ReverseProxy, with fewer errors and a p50
// well within the timeout, on a busy machine too. The timeout is shortened
// with the run, to 250ms, so that the bare proxy's queues grow to it
// within the first of its 3s, as they do within the first quarter of the
// demonstration's 15s with the timeout of a second: with a second here,
// the bare proxy still answers most requests in time when its 3s end
// (CI saw 1011/s through it to towerproxy's 766/s). Not the p99: P2C
// sends the slow backend, whose service time is 200ms, about 1% of what
// it answers, and the p99 is one of those, within 250ms or not.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 6s of load")
	}
	if raceEnabled {
		t.Skip("a load test says nothing under the race detector; CI runs it without (.ci/run)")
	}
	const attempts = 3
	for i := 1; ; i++ {
		problems := demoProblems(t)
		if len(problems) == 0 {
			return
		}
		if i == attempts {
			for _, p := range problems {
				t.Error(p)
			}
			return
		}
		t.Logf("run %d of %d: %s", i, attempts, strings.Join(problems, "\n"))
	}
}

// demoProblems runs the shortened demonstration once and says what in its
// table is not as TestDemo wants. A run shares the machine with whatever
// else runs: when something else takes a core for seconds, both proxies
// miss the 250ms for nearly every request, and the run shows nothing
// about either. So TestDemo runs it up to three times and fails only if
// none of them is right; a proxy that does worse fails all three.
func demoProblems(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var out strings.Builder
	if err := Run(ctx, &out, Options{Duration: 6 * time.Second, Timeout: 250 * time.Millisecond, Admin: "off"}); err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for line := range strings.Lines(out.String()) {
		f := strings.Fields(line)
		if len(f) == 6 && strings.HasSuffix(f[1], "/s") {
			rows[f[0]] = f[1:]
		}
	}
	ours, bare := rows["towerproxy"], rows["ReverseProxy"]
	if ours == nil || bare == nil {
		t.Fatalf("no line for towerproxy or ReverseProxy in:\n%s", out.String())
	}
	num := func(s, suffix string) float64 {
		v, err := strconv.ParseFloat(strings.TrimSuffix(s, suffix), 64)
		if err != nil {
			t.Fatalf("%q: %v in:\n%s", s, err, out.String())
		}
		return v
	}
	var problems []string
	if g, b := num(ours[0], "/s"), num(bare[0], "/s"); g <= b {
		problems = append(problems, fmt.Sprintf("goodput %v/s through towerproxy, %v/s through ReverseProxy: want more through towerproxy", g, b))
	}
	if e, b := num(ours[3], "%"), num(bare[3], "%"); e >= b {
		problems = append(problems, fmt.Sprintf("errors %v%% through towerproxy, %v%% through ReverseProxy: want fewer through towerproxy", e, b))
	}
	if p50 := num(ours[1], "ms"); p50 >= 125 {
		problems = append(problems, fmt.Sprintf("p50 %vms through towerproxy, want within half the timeout, 125ms", p50))
	}
	if problems != nil {
		problems = append(problems, out.String())
	}
	return problems
}
