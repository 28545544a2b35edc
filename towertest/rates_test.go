package towertest_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towertest"
)

const ms = time.Millisecond

// CheckBurst allows burst + (d+slack)/interval admissions within a
// stretch d, rounded down, and names the first stretch over it.
func TestCheckBurst(t *testing.T) {
	for _, tt := range []struct {
		what  string
		at    []time.Duration
		burst int
		slack time.Duration
		want  string // the error, or "" for none
	}{
		{"one every interval", []time.Duration{0, 100 * ms, 200 * ms}, 1, 0, ""},
		{"two 1ns short of an interval apart", []time.Duration{0, 100*ms - 1}, 1, 0, "2 admissions within [0s, 99.999999ms], want at most 1 (burst 1, a token every 100ms)"},
		{"the same, with a slack of 1ns", []time.Duration{0, 100*ms - 1}, 1, 1, ""},
		{"a burst at once", []time.Duration{0, 0, 0}, 3, 0, ""},
		{"one more than the burst at once", []time.Duration{5 * ms, 5 * ms, 5 * ms, 5 * ms}, 3, 0, "4 admissions within [5ms, 5ms], want at most 3 (burst 3, a token every 100ms)"},
		{"a burst, then the next too soon", []time.Duration{0, 0, 50 * ms, 150 * ms}, 2, 0, "3 admissions within [0s, 50ms], want at most 2 (burst 2, a token every 100ms)"},
		{"the first stretch over, from the earliest", []time.Duration{0, 100 * ms, 200 * ms, 250 * ms}, 1, 0, "4 admissions within [0s, 250ms], want at most 3 (burst 1, a token every 100ms)"},
	} {
		err := towertest.CheckBurst(tt.at, tt.burst, 100*ms, tt.slack)
		if got := errString(err); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.what, got, tt.want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// RandomCallers is the same run for the same seed, in order of arrival,
// and each behaviour shows up.
func TestRandomCallers(t *testing.T) {
	a := towertest.RandomCallers(7, 200, time.Second, 100*ms)
	if b := towertest.RandomCallers(7, 200, time.Second, 100*ms); !slices.Equal(a, b) {
		t.Fatal("the same seed gave two runs")
	}
	seen := map[towertest.Behaviour]int{}
	for i, c := range a {
		if c.Index != i || (i > 0 && c.Arrive < a[i-1].Arrive) || c.Arrive >= time.Second || c.After > 100*ms || c.After%ms != 0 {
			t.Fatalf("caller %d: %+v", i, c)
		}
		seen[c.Does]++
	}
	for b := towertest.Patient; b <= towertest.Probe; b++ {
		if seen[b] == 0 {
			t.Errorf("behaviour %d never drawn in 200 callers", b)
		}
	}
}

// Drive returns the instants at which permits that were then called
// were granted: a probe that finds the service ready is one, a permit
// released unused is not, and one held then called counts when it was
// granted.
func TestDrive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) { return req, nil })
		callers := []towertest.Caller{
			{Arrive: 0, Does: towertest.Unused, After: 5 * ms},
			{Arrive: 10 * ms, Does: towertest.Holds, After: 30 * ms},
			{Arrive: 20 * ms, Does: towertest.Probe},
			{Arrive: 30 * ms, Does: towertest.Deadline, After: ms},
		}
		var reqs atomic.Int32
		at := towertest.Drive(svc, callers, func(c towertest.Caller) string {
			reqs.Add(1)
			return "x"
		})
		if want := []time.Duration{10 * ms, 20 * ms, 30 * ms}; !slices.Equal(at, want) {
			t.Errorf("granted at %v, want %v", at, want)
		}
		if n := reqs.Load(); n != 3 {
			t.Errorf("%d requests built, want 3 (every caller but the one that released)", n)
		}
	})
}
