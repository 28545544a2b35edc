package main

import (
	"fmt"
	"io"
	"time"

	"github.com/towergo/tower"
)

// capacityDrop is a server that loses six of its eight workers at 10s and
// gets them back at 20s.
func capacityDrop() scenario {
	const s = time.Second
	return changes("A capacity drop and return: %d workers of %v, 2 from 10s, %[1]d again from 20s",
		[]phase{{10 * s, scenarioWorkers, serviceTime}, {10 * s, 2, serviceTime}, {10 * s, scenarioWorkers, serviceTime}},
		[]string{"8 workers", "2 from 10s", "8 from 20s"})
}

// slowService is a server whose every request takes four times as long
// from 10s, and is fast again from 20s: its workers are as many, but each
// serves a quarter as many requests a second.
func slowService() scenario {
	const s = time.Second
	return changes("A service 4x slower, then fast again: %d workers of %v, 40ms from 10s, 10ms again from 20s",
		[]phase{{10 * s, scenarioWorkers, serviceTime}, {10 * s, scenarioWorkers, 4 * serviceTime}, {10 * s, scenarioWorkers, serviceTime}},
		[]string{"10ms", "40ms from 10s", "10ms from 20s"})
}

// steady is how long before its end a stage counts as steady, for the
// limit's spread.
const steady = 5 * time.Second

// changes is a scenario whose server changes at the start of each of ps
// but the first, offered scenarioRate throughout. title is a format for
// the server's workers and service time; names name the stages.
func changes(title string, ps []phase, names []string) scenario {
	var starts []time.Duration
	var length time.Duration
	for _, ph := range ps {
		starts = append(starts, length)
		length += ph.length
	}
	stage := func(r result, i int) figures {
		return figuresOf(r.out, starts[i], starts[i]+ps[i].length, every)
	}
	return scenario{
		title: fmt.Sprintf(title, scenarioWorkers, serviceTime) + fmt.Sprintf("; offered %d/s.\n", scenarioRate) +
			fmt.Sprintf("settled: from the stage's start until the limit is within its workers' band for good (eight: %d-%d, two: %d-%d);\n",
				stageBand(8)[0], stageBand(8)[1], stageBand(2)[0], stageBand(2)[1]) +
			fmt.Sprintf("limit and swing ((most-least)/least): over the stage's last %v; the rest: requests sent in the stage.", steady),
		length:  length,
		changes: starts[1:],
		measure: func() []result {
			return openRun(ps, []load{{scenarioRate, 0, length, tower.PriorityNormal}}, append(delayBased(), failsafes()...))
		},
		table: func(w io.Writer, rs []result) {
			fmt.Fprintln(w, "strategy\tstage\tsettled\tlimit\tswing\tgoodput\tp50\tp99\tshed")
			for _, r := range rs {
				for i, ph := range ps {
					end := starts[i] + ph.length
					band := stageBand(ph.workers)
					lo, hi := limitSpread(r.samples, end-steady, end)
					f := stage(r, i)
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.name, names[i],
						settleString(settledAt(r.samples, starts[i], end, band[0], band[1])),
						spreadString(lo, hi), percent(hi-lo, lo),
						percent(goodput(f, capacityOf(ph), ph.length), 100), ms(f.p50), ms(f.p99), percent(f.shed, f.sent))
				}
			}
		},
		scores: func(r result) []score {
			var sc []score
			for i, ph := range ps {
				f := stage(r, i)
				sc = append(sc,
					score{names[i] + " goodput", goodput(f, capacityOf(ph), ph.length), +1, "%"},
					score{names[i] + " p99", int(f.p99.Milliseconds()), -1, "ms"})
			}
			return sc
		},
	}
}

// capacityOf is how many requests per second the server serves in ph.
func capacityOf(ph phase) int { return ph.workers * int(time.Second/ph.service) }
