package main

import (
	"fmt"
	"io"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
)

// The spike: low-priority requests at 12 times the normal ones' rate,
// for 3s, on top of them.
const (
	normalRate = 400
	spikeRate  = 12 * normalRate
	spikeFrom  = 4 * time.Second
	spikeFor   = 3 * time.Second
)

// lowPrioritySpike is a spike of low-priority requests on a server
// without a LoadShed: callers wait in the limiter, up to their deadline.
func lowPrioritySpike() scenario {
	ps := []phase{{12 * time.Second, scenarioWorkers, serviceTime}}
	loads := []load{
		{normalRate, 0, ps[0].length, tower.PriorityNormal},
		{spikeRate, spikeFrom, spikeFor, tower.PriorityLow},
	}
	of := func(p tower.Priority) func(outcome) bool {
		return func(o outcome) bool { return o.prio == p }
	}
	spike := func(r result, p tower.Priority) figures {
		return figuresOf(r.out, spikeFrom, spikeFrom+spikeFor, of(p))
	}
	return scenario{
		title: fmt.Sprintf("A low-priority spike without a LoadShed: %d workers of %v (%d/s); %d/s of normal priority for %v, and %d/s of low\n"+
			"priority from %v to %v, each with a deadline of %v. limit: from 2s; answered/s: answers in the spike, all priorities;\n"+
			"within 100ms/s: those of them that came within 100ms of their request; the rest: requests sent in it, p99 over all of them,\n"+
			"refused ones too.",
			scenarioWorkers, serviceTime, capacity(scenarioWorkers), normalRate, ps[0].length, spikeRate, spikeFrom, spikeFrom+spikeFor, clientTimeout),
		length:  ps[0].length,
		changes: []time.Duration{spikeFrom, spikeFrom + spikeFor},
		measure: func() []result {
			var ss []strategy
			for _, a := range []struct {
				name string
				alg  func() adaptive.Algorithm
			}{
				{"gradient2", adaptive.Gradient2()},
				{"vegas", adaptive.Vegas()},
				{"aimd", adaptive.AIMD(adaptive.AIMDTimeout(objective / 2))},
			} {
				ss = append(ss, strategy{a.name, ourOwn, func(inner tower.Service[int, struct{}]) (tower.Service[int, struct{}], func() int) {
					l, limit := newOurs(inner, a.alg)
					return &untied{inner: l}, limit
				}})
			}
			return openRun(ps, loads, append(ss, failsafes()...))
		},
		table: func(w io.Writer, rs []result) {
			fmt.Fprintln(w, "strategy\tlimit\tanswered/s\twithin 100ms/s\tnormal answered\tnormal p99\tlow answered\tlow p99")
			for _, r := range rs {
				n, l := spike(r, tower.PriorityNormal), spike(r, tower.PriorityLow)
				fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", r.name,
					spreadString(limitSpread(r.samples, 2*time.Second, ps[0].length)),
					answeredIn(r.out, spikeFrom, spikeFrom+spikeFor, clientTimeout)/int(spikeFor/time.Second),
					answeredIn(r.out, spikeFrom, spikeFrom+spikeFor, objective)/int(spikeFor/time.Second),
					percent(n.answered, n.sent), ms(n.p99All), percent(l.answered, l.sent), ms(l.p99All))
			}
		},
		scores: func(r result) []score {
			n, l := spike(r, tower.PriorityNormal), spike(r, tower.PriorityLow)
			return []score{
				{"answered/s", answeredIn(r.out, spikeFrom, spikeFrom+spikeFor, clientTimeout) / int(spikeFor/time.Second), +1, ""},
				{"within 100ms/s", answeredIn(r.out, spikeFrom, spikeFrom+spikeFor, objective) / int(spikeFor/time.Second), +1, ""},
				{"normal p99", int(n.p99All.Milliseconds()), -1, "ms"},
				{"low p99", int(l.p99All.Milliseconds()), -1, "ms"},
			}
		},
	}
}

// answeredIn counts the requests of out answered in [from, to) within
// within of being sent, of any priority and whenever sent. Counting the
// answers in the window, rather than those of the requests sent in it,
// keeps what was in flight at the window's edges out of the rate: a
// limit that holds more in flight as the spike ends would otherwise
// count the answers it gives after it.
func answeredIn(out []outcome, from, to, within time.Duration) int {
	n := 0
	for _, o := range out {
		if at := o.due + o.latency; o.kind == served && o.latency <= within && at >= from && at < to {
			n++
		}
	}
	return n
}
