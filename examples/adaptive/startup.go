package main

import (
	"fmt"
	"io"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
)

// The server of the scenarios, but the last: 8 workers of serviceTime,
// 800 requests a second, offered twice that.
const (
	scenarioWorkers = 8
	scenarioRate    = 1600
)

// firstWindowLimit is the limit that a baseline taken from the first,
// queued window holds: 20 in flight on 8 workers take 25ms, which such a
// baseline reads as no queueing, so it neither lowers the limit nor, with
// the load at the limit, has a reason to.
const firstWindowLimit = 20

// startedUnderOverload is a server offered twice what it can serve from
// the first instant, so that a limiter's first loaded window is already
// queued. The figures after the first second are those of a limit that
// has had one window to move.
func startedUnderOverload() scenario {
	const length, s = 10 * time.Second, time.Second
	band := stageBand(scenarioWorkers)
	after := func(r result) figures { return figuresOf(r.out, s, length, every) }
	return scenario{
		title: fmt.Sprintf("Started under overload: %d workers of %v (%d/s), offered %d/s from the first instant for %v.\n"+
			"settled: from then on the limit is within %d-%d; limit and queued (mean, beyond the workers): from 2s;\n"+
			"p99 in 1st s: requests sent in the first second; the rest: requests sent from 1s.",
			scenarioWorkers, serviceTime, capacity(scenarioWorkers), scenarioRate, length, band[0], band[1]),
		length: length,
		measure: func() []result {
			ss := append(delayBased(), strategy{"static20", baseline, func(inner tower.Service[int, struct{}]) (tower.Service[int, struct{}], func() int) {
				return loadshed.New(limit.NewConcurrency(inner, firstWindowLimit)), func() int { return firstWindowLimit }
			}})
			return openRun([]phase{{length, scenarioWorkers, serviceTime}},
				[]load{{scenarioRate, 0, length, tower.PriorityNormal}}, append(ss, failsafes()...))
		},
		table: func(w io.Writer, rs []result) {
			fmt.Fprintln(w, "strategy\tsettled\tlimit\tqueued\tp99 in 1st s\tgoodput\tp50\tp99\tshed")
			for _, r := range rs {
				f := after(r)
				fmt.Fprintf(w, "%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\n", r.name,
					settleString(settledAt(r.samples, 0, length, band[0], band[1])),
					spreadString(limitSpread(r.samples, 2*s, length)),
					meanQueued(r.samples, 2*s, length, scenarioWorkers),
					ms(figuresOf(r.out, 0, s, every).p99),
					percent(goodput(f, capacity(scenarioWorkers), length-s), 100), ms(f.p50), ms(f.p99), percent(f.shed, f.sent))
			}
		},
		scores: func(r result) []score {
			f := after(r)
			return []score{
				{"goodput", goodput(f, capacity(scenarioWorkers), length-s), +1, "%"},
				{"p99", int(f.p99.Milliseconds()), -1, "ms"},
			}
		},
	}
}

// stageBand is the band a limit settles into in front of n workers: for
// eight, from 9 (eight in flight with normal priority, the reserve of
// one aside) to 16 (at most as many waiting as served); for two, from 2
// to 8, below eight's band. They are the bands of package adaptive's
// behaviour tests.
func stageBand(n int) [2]int {
	switch n {
	case 2:
		return [2]int{2, 8}
	case 8:
		return [2]int{9, 16}
	}
	panic(fmt.Sprintf("no band for %d workers", n))
}
