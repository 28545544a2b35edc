package main

import (
	"fmt"
	"slices"
	"time"
)

// stats are one strategy's figures.
type stats struct {
	success       float64       // share of requests answered 200 in time
	p50, p99      time.Duration // over every request, answered or not
	p99After      time.Duration // p99 of the requests sent once the failed backends were out
	amplification float64       // backend attempts per client request
	stopDies      time.Duration // from b3's death to the first window it is sent nothing; -1: never
	stopRecovers  time.Duration // from the start to the first window b4 is sent nothing; -1: never
	back          time.Duration // from b4's recovery to the first window it gets half its share; -1: never
}

// window is the length of the windows in which a backend's sends are
// counted, slid by step.
const (
	window = 500 * time.Millisecond
	step   = 100 * time.Millisecond
)

// settled is when the failed backends count as out for p99After: a second
// after b3 dies, while b4 has not recovered yet.
const settled = diesAt + time.Second

func summarize(out []outcome, sent map[string][]time.Duration) stats {
	var s stats
	var all, after []time.Duration
	ok := 0
	for _, o := range out {
		all = append(all, o.latency)
		if o.due >= settled && o.due < recoversAt {
			after = append(after, o.latency)
		}
		if o.ok {
			ok++
		}
	}
	s.success = float64(ok) / float64(len(out))
	s.p50, s.p99 = quantile(all, 0.5), quantile(all, 0.99)
	s.p99After = quantile(after, 0.99)
	attempts := 0
	for _, at := range sent {
		attempts += len(at)
	}
	s.amplification = float64(attempts) / float64(len(out))
	s.stopDies = firstWindow(diesAt, runLength, func(from, to time.Duration) bool {
		return count(sent[dies], from, to) == 0
	})
	s.stopRecovers = firstWindow(0, recoversAt, func(from, to time.Duration) bool {
		return count(sent[recovers], from, to) == 0
	})
	s.back = firstWindow(recoversAt, runLength, func(from, to time.Duration) bool {
		total := 0
		for _, at := range sent {
			total += count(at, from, to)
		}
		return total > 0 && count(sent[recovers], from, to)*10 >= total // half of a fifth
	})
	return s
}

// firstWindow returns how long after from the first window [t, t+window)
// with t a whole number of steps after from and t+window <= until
// satisfies ok, or -1 if none does.
func firstWindow(from, until time.Duration, ok func(from, to time.Duration) bool) time.Duration {
	for t := from; t+window <= until; t += step {
		if ok(t, t+window) {
			return t - from
		}
	}
	return -1
}

// count returns how many of the sorted instants at are in [from, to).
func count(at []time.Duration, from, to time.Duration) int {
	i, _ := slices.BinarySearch(at, from)
	j, _ := slices.BinarySearch(at, to)
	return j - i
}

// quantile returns the q-quantile of ds, the nearest rank.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	i := int(q*float64(len(ds))+0.5) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

// line formats a strategy's figures.
func line(name string, s stats) string {
	return fmt.Sprintf("%-9s success=%.2f%% p50=%v p99=%v p99-after=%v amplification=%.3f stop(b3)=%s stop(b4)=%s back(b4)=%s",
		name, 100*s.success, ms(s.p50), ms(s.p99), ms(s.p99After), s.amplification,
		since(s.stopDies), since(s.stopRecovers), since(s.back))
}

func ms(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

func since(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return d.String()
}
