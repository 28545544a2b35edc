package main

import (
	"fmt"
	"io"
	"slices"
)

// A stack is one line of the comparison.
type stack struct {
	name      string
	tower     string // run.sh's key
	maxAllocs float64
	failsafe  bool // failsafe-go has the same stack
}

var stacks = []stack{
	{"concurrency_limit", "tower_concurrency_limit_ns", 0, true},
	{"timeout", "tower_timeout_ns", 1, true},
	{"timeout_concurrency_limit", "tower_timeout_concurrency_limit_ns", 1, true},
	{"rate_limit", "tower_rate_limit_ns", 0, true},
	{"buffer_16", "tower_buffer_16tasks_mt2_ns", 1, false},
	{"buffer_16_worker", "tower_buffer_cl1_16tasks_mt2_ns", 1, false},
}

// Targets: per request, at most tower's cost on every stack, and at most a
// fifth of failsafe-go's on Timeout > ConcurrencyLimit; per request on two
// CPUs, at most 1.5 times the cost on one; and an adaptive limit's
// uncontended permit at most twice a ConcurrencyLimit's, with no
// allocation.
const (
	maxRatio         = 1.0 // go / tower
	minFailsafeGain  = 5.0 // failsafe-go / go, on timeout_concurrency_limit
	maxScaling       = 1.5 // 2 CPUs / 1 CPU, per request
	maxAdaptiveRatio = 2.0 // adaptive.Limiter / limit.Concurrency, per request
)

// report prints one line per stack, then the summary, and reports whether
// every target is met. scaling and adaptive may be nil.
func report(w io.Writer, goRuns goResults, tower map[string][]float64, scaling, adaptive goResults) bool {
	var misses []string
	miss := func(format string, args ...any) { misses = append(misses, fmt.Sprintf(format, args...)) }
	gain := 0.0
	for _, s := range stacks {
		ours := best(goRuns["BenchmarkTower/"+s.name])
		towerRuns, ok := tower[s.tower]
		if ours == nil || !ok {
			miss("%s: no figure (ours %v, tower %v)", s.name, ours != nil, ok)
			continue
		}
		goNs, goAllocs := median(ours, ns), median(ours, allocs)
		t := medianOf(towerRuns)
		ratio := goNs / t
		line := fmt.Sprintf("%s go=%.1fns tower=%.1fns ratio=%.2f allocs=%.0f", s.name, goNs, t, ratio, goAllocs)
		if s.failsafe {
			if fs := best(goRuns["BenchmarkFailsafe/"+s.name]); fs != nil {
				fsNs := median(fs, ns)
				line += fmt.Sprintf(" failsafe=%.1fns", fsNs)
				if s.name == "timeout_concurrency_limit" {
					gain = fsNs / goNs
				}
			}
		}
		fmt.Fprintln(w, line)
		if ratio > maxRatio {
			miss("%s: ratio %.2f > %.1f", s.name, ratio, maxRatio)
		}
		if goAllocs > s.maxAllocs {
			miss("%s: %.0f allocs > %.0f", s.name, goAllocs, s.maxAllocs)
		}
	}

	fmt.Fprintln(w)
	if gain > 0 {
		fmt.Fprintf(w, "summary: Timeout > ConcurrencyLimit is %.1fx faster than failsafe-go's Timeout + Bulkhead (target %.0fx)\n", gain, minFailsafeGain)
		if gain < minFailsafeGain {
			miss("timeout_concurrency_limit: %.1fx faster than failsafe-go < %.0fx", gain, minFailsafeGain)
		}
	}
	if kit := best(goRuns["BenchmarkGoKit/rate_limit"]); kit != nil {
		fmt.Fprintf(w, "summary: go-kit endpoint + ErroringLimiter(x/time/rate) %.1fns, %.0f allocs\n", median(kit, ns), median(kit, allocs))
	}
	for _, name := range sortedKeys(scaling) {
		byProcs := scaling[name]
		one, two := byProcs[1], byProcs[2]
		if one == nil || two == nil {
			continue
		}
		f := median(two, ns) / median(one, ns)
		fmt.Fprintf(w, "summary: %s per request on 2 CPUs / 1 CPU = %.2f (target <= %.1f)\n", name, f, maxScaling)
		if f > maxScaling {
			miss("%s: scaling %.2f > %.1f", name, f, maxScaling)
		}
	}
	if a, c := best(adaptive["BenchmarkAdaptive"]), best(adaptive["BenchmarkConcurrency"]); a != nil && c != nil {
		aNs, cNs, aAllocs := median(a, ns), median(c, ns), median(a, allocs)
		f := aNs / cNs
		fmt.Fprintf(w, "summary: adaptive limit %.1fns, %.0f allocs, per request / ConcurrencyLimit %.1fns = %.2f (target <= %.1f, 0 allocs)\n", aNs, aAllocs, cNs, f, maxAdaptiveRatio)
		if f > maxAdaptiveRatio {
			miss("adaptive: ratio %.2f > %.1f", f, maxAdaptiveRatio)
		}
		if aAllocs > 0 {
			miss("adaptive: %.0f allocs > 0", aAllocs)
		}
	}
	if len(misses) == 0 {
		fmt.Fprintln(w, "summary: every target met")
		return true
	}
	for _, m := range misses {
		fmt.Fprintln(w, "summary: MISSED", m)
	}
	return false
}

// best returns the runs made with the most CPUs: the machine's default.
func best(byProcs map[int][]run) []run {
	procs := -1
	for p := range byProcs {
		procs = max(procs, p)
	}
	return byProcs[procs]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
