package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/towergo/tower/towerredis/redistest"
)

// A run of a second against a real redis-server: the local limits let each
// replica have its own rate and its own 4 in flight, the fleet four times
// the limit; the limits in Redis hold for the fleet, never above the rate
// plus the burst, and exactly 4 in flight at the peak.
func TestRun(t *testing.T) {
	srv := redistest.Start(t)
	var out strings.Builder
	run(&out, srv.Addr(), time.Second)
	t.Log("\n" + out.String())

	rates := regexp.MustCompile(`(?m)^  (local|towerredis) +replica1=(\d+) replica2=(\d+) replica3=(\d+) replica4=(\d+) fleet=(\d+) \([0-9.]+/s\)$`).FindAllStringSubmatch(out.String(), -1)
	if len(rates) != 2 || rates[0][1] != "local" || rates[1][1] != "towerredis" {
		t.Fatalf("want a local and a towerredis rate line, got %q", rates)
	}
	budget := rate + burst // what one bucket allows in a second
	for _, m := range rates {
		fleet, _ := strconv.Atoi(m[6])
		want := budget
		if m[1] == "local" {
			want = replicas * budget
		}
		// More than the budget would be a limit broken. Less is a caller
		// granted a token as the run ends, which does not count it, or a
		// busy machine that stalled the callers for longer than the burst
		// covers: checked loosely.
		if fleet > want || fleet < want*8/10 {
			t.Errorf("%s: the fleet admitted %d in a second, want %d or a little fewer", m[1], fleet, want)
		}
	}
	// The shared limit is divided by demand: the replica with 4 callers
	// gets more than the one with 1.
	first, _ := strconv.Atoi(rates[1][2])
	last, _ := strconv.Atoi(rates[1][5])
	if last <= first {
		t.Errorf("towerredis: replica4 (4 callers) admitted %d, replica1 (1 caller) %d: want more", last, first)
	}

	peaks := regexp.MustCompile(`(?m)^  (local|towerredis) +peak=(\d+)$`).FindAllStringSubmatch(out.String(), -1)
	if len(peaks) != 2 {
		t.Fatalf("want two peak lines, got %q", peaks)
	}
	if peaks[0][2] != strconv.Itoa(replicas*inFlight) || peaks[1][2] != strconv.Itoa(inFlight) {
		t.Errorf("peaks: local %s, towerredis %s; want %d and %d", peaks[0][2], peaks[1][2], replicas*inFlight, inFlight)
	}
}
