package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// How the figures are taken.
const (
	// objective is the latency within which an answer counts as goodput:
	// ten times the server's unloaded latency, serviceTime.
	objective = 10 * serviceTime
	// window is the span of sending times over which settle takes a p99,
	// and step how far the window slides at a time.
	window = 500 * time.Millisecond
	step   = 10 * time.Millisecond

	// The targets for package adaptive.
	minGoodput = 90              // percent of capacity, in every phase
	maxSettle  = 2 * time.Second // after each change of capacity
)

// phaseStats are the figures printed for one strategy in one phase. All
// count the requests sent during the phase.
type phaseStats struct {
	capacity int           // requests per second the server could serve
	goodput  int           // answers within objective per second, in percent of capacity
	p50, p99 time.Duration // of the requests not shed: their answer's latency, or clientTimeout
	shed     int           // percent of requests turned away at once
	settle   time.Duration // see settleTime; negative: never
}

// summarize returns the figures of each phase for the outcomes of one
// strategy, ordered by sending time as drive returns them.
func summarize(out []outcome) []phaseStats {
	var stats []phaseStats
	var from time.Duration
	for _, ph := range phases {
		to := from + ph.length
		in := sentBetween(out, from, to)
		var good, nShed int
		var lat []time.Duration
		for _, o := range in {
			switch {
			case o.kind == shed:
				nShed++
				continue
			case o.kind == served && o.latency <= objective:
				good++
			}
			lat = append(lat, o.latency)
		}
		slices.Sort(lat)
		c := capacity(ph.workers)
		stats = append(stats, phaseStats{
			capacity: c,
			goodput:  roundDiv(100*good*int(time.Second), c*int(ph.length)),
			p50:      rank(lat, 50),
			p99:      rank(lat, 99),
			shed:     roundDiv(100*nShed, len(in)),
			settle:   settleTime(in, from, to),
		})
		from = to
	}
	return stats
}

// sentBetween returns the outcomes of the requests sent in [from, to).
func sentBetween(out []outcome, from, to time.Duration) []outcome {
	byDue := func(o outcome, d time.Duration) int { return cmp.Compare(o.due, d) }
	i, _ := slices.BinarySearchFunc(out, from, byDue)
	j, _ := slices.BinarySearchFunc(out, to, byDue)
	return out[i:j]
}

// settleTime is how long after from, the start of the phase, the p99 of
// every window of requests sent from then on is within objective: the
// smallest s, a multiple of step, such that each window [t, t+window) with
// t in from+s, from+s+step, ... has a p99 within objective, up to the last
// window that ends by to−objective. (A request sent later than that may
// meet the next phase's capacity within its objective, and so tells of the
// next change, not of this one.) Each window's p99 is over its requests
// not shed, as the phase's; a window without any passes. It returns -1 if
// the last window fails: the p99 never settled. in holds the requests
// sent in [from, to).
func settleTime(in []outcome, from, to time.Duration) time.Duration {
	last := to - objective - window // the last window's start
	settle := time.Duration(0)
	for t := from; t <= last; t += step {
		if !withinObjective(sentBetween(in, t, t+window)) {
			settle = t + step - from
		}
	}
	if from+settle > last {
		return -1
	}
	return settle
}

// withinObjective reports whether the p99 of the requests of w not shed
// is within objective: by nearest rank, whether at least ceil(0.99 n) of
// those n took objective or less.
func withinObjective(w []outcome) bool {
	n, fast := 0, 0
	for _, o := range w {
		if o.kind == shed {
			continue
		}
		n++
		if o.latency <= objective {
			fast++
		}
	}
	return fast >= (n*99+99)/100
}

// rank returns the p-th percentile of sorted by nearest rank, 0 if empty.
func rank(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[(len(sorted)*p+99)/100-1]
}

func roundDiv(a, b int) int { return (2*a + b) / (2 * b) }

// line is how one strategy's phase prints.
func line(name string, i int, s phaseStats) string {
	return fmt.Sprintf("%-9s phase=%d capacity=%d/s goodput=%d%% p50=%dms p99=%dms settle=%s shed=%d%%",
		name, i+1, s.capacity, s.goodput, s.p50.Milliseconds(), s.p99.Milliseconds(), settleString(s.settle), s.shed)
}

// misses lists where ours falls short of the targets: goodput at least
// minGoodput percent of capacity and settle within maxSettle in every
// phase, and goodput and p99 at least as good as each peer's.
func misses(ours []phaseStats, peers map[string][]phaseStats, names []string) []string {
	var m []string
	for i, s := range ours {
		if s.goodput < minGoodput {
			m = append(m, fmt.Sprintf("phase %d goodput %d%% < %d%%", i+1, s.goodput, minGoodput))
		}
		if s.settle < 0 || s.settle > maxSettle {
			m = append(m, fmt.Sprintf("phase %d settle %s > %s", i+1, settleString(s.settle), maxSettle))
		}
		for _, name := range names {
			p := peers[name][i]
			if s.goodput < p.goodput {
				m = append(m, fmt.Sprintf("phase %d goodput %d%% < %s's %d%%", i+1, s.goodput, name, p.goodput))
			}
			if s.p99.Milliseconds() > p.p99.Milliseconds() {
				m = append(m, fmt.Sprintf("phase %d p99 %dms > %s's %dms", i+1, s.p99.Milliseconds(), name, p.p99.Milliseconds()))
			}
		}
	}
	return m
}

func settleString(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return d.String()
}

// verdict is the line that says whether one of ours met the targets.
func verdict(name string, m []string) string {
	if len(m) == 0 {
		return name + " targets: met"
	}
	return name + " targets: missed: " + strings.Join(m, "; ")
}
