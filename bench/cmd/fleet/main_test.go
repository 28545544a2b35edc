package main

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/towergo/tower/towerredis/redistest"
)

// A short run against a real redis-server prints its lines in their form;
// each request through either limit costs one round trip; batches of 8
// cost at least 5 times fewer round trips than single tokens. The
// accuracy targets are the full run's (fleet.sh); a second's run on a busy
// machine is checked loosely, within 10%.
func TestShortRun(t *testing.T) {
	srv := redistest.Start(t)
	var out strings.Builder
	c := config{rounds: 1, duration: time.Second, replicas: 4, callers: 2, rate: 500, burst: 10, batch: 8}
	run(&out, srv.Addr(), c)
	t.Log("\n" + out.String())
	if !regexp.MustCompile(`(?m)^per_request towerredis=[0-9.]+us redis_rate=[0-9.]+us ratio=[0-9.]+ allocs=\d+/\d+ round_trips=1\.00/1\.00$`).MatchString(out.String()) {
		t.Error("no per_request line at one round trip per request each")
	}
	fleet := regexp.MustCompile(`(?m)^fleet replicas=4 limit=500/s burst=10 batch=(\d+) for 1s: admitted \d+ \([0-9.]+/s, ([-+][0-9.]+)%\), round trips per request ([0-9.]+)$`)
	lines := fleet.FindAllStringSubmatch(out.String(), -1)
	if len(lines) != 2 || lines[0][1] != "1" || lines[1][1] != "8" {
		t.Fatalf("want two fleet lines, batch=1 and batch=8; got %q", lines)
	}
	var trips [2]float64
	for i, m := range lines {
		pct, _ := strconv.ParseFloat(m[2], 64)
		if math.Abs(pct) > 10 {
			t.Errorf("batch=%s: the fleet admitted %+.2f%% of its limit, want within 10%%", m[1], pct)
		}
		trips[i], _ = strconv.ParseFloat(m[3], 64)
	}
	if trips[1]*5 > trips[0] {
		t.Errorf("round trips per request %.3f with batches of 8, %.3f without: want at least 5x fewer", trips[1], trips[0])
	}
	if n := strings.Count(out.String(), "summary: "); n != 3 {
		t.Errorf("%d summary lines, want 3", n)
	}
}
