package main

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// runVirtual runs the program on synctest's virtual clock with n requests
// per strategy.
func runVirtual(t *testing.T, n int) string {
	var out strings.Builder
	synctest.Test(t, func(t *testing.T) {
		run(&out, n, synctest.Wait)
	})
	return out.String()
}

func TestOneSlowBackend(t *testing.T) {
	const want = `roundrobin: p50=2ms p99=200ms p99.9=200ms slow=10.0%
p2c-pending: p50=2ms p99=2ms p99.9=200ms slow=0.4%
p2c-peakewma: p50=2ms p99=2ms p99.9=200ms slow=0.2%
`
	if got := runVirtual(t, requests); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestOneSlowBackend10000(t *testing.T) {
	const want = `roundrobin: p50=2ms p99=200ms p99.9=200ms slow=10.0%
p2c-pending: p50=2ms p99=2ms p99.9=200ms slow=0.3%
p2c-peakewma: p50=2ms p99=2ms p99.9=2ms slow=0.0%
`
	if got := runVirtual(t, 10000); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// The counts behind the shares, and the goal: PeakEwma's p99 within five
// times the fast backends' latency.
func TestSlowRequests(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want []int // slow requests per strategy
	}{
		{1600, []int{160, 6, 4}},
		{10000, []int{1000, 26, 4}},
	} {
		synctest.Test(t, func(t *testing.T) {
			for i, s := range strategies {
				bal := s.build()
				r := simulate(bal, tt.n, synctest.Wait)
				bal.Close()
				if r.slow != tt.want[i] {
					t.Errorf("%d requests, %s: got %d served by the slow backend, want %d", tt.n, s.name, r.slow, tt.want[i])
				}
				if len(r.latencies) != tt.n {
					t.Errorf("%d requests, %s: got %d answers", tt.n, s.name, len(r.latencies))
				}
				if s.name == "p2c-peakewma" && r.quantile(990) > 5*fast {
					t.Errorf("%d requests: PeakEwma's p99 is %v, want at most %v", tt.n, r.quantile(990), 5*fast)
				}
			}
		})
	}
}

// Each strategy's run of 1,600 requests takes the virtual time its slow
// requests imply: round robin holds each caller up for 200ms about every
// tenth request; with PeakEwma, the four slow requests hold four callers
// for the first 200ms while the twelve others serve 1,200 fast ones, and
// then sixteen serve the last 396 in 50ms.
func TestRunTime(t *testing.T) {
	want := map[string]time.Duration{
		"roundrobin":   2268 * time.Millisecond,
		"p2c-pending":  404 * time.Millisecond,
		"p2c-peakewma": 250 * time.Millisecond,
	}
	synctest.Test(t, func(t *testing.T) {
		for _, s := range strategies {
			bal := s.build()
			start := time.Now()
			simulate(bal, requests, synctest.Wait)
			got := time.Since(start)
			bal.Close()
			if got != want[s.name] {
				t.Errorf("%s: took %v, want %v", s.name, got, want[s.name])
			}
		}
	})
}
