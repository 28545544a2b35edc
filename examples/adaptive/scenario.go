package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
)

// A scenario is a situation that the comparison's phases do not test,
// its strategies run at once, each against a server of its own.
type scenario struct {
	title   string // what the scenario is, printed above its table
	length  time.Duration
	changes []time.Duration // the instants its server changes, for the chart
	measure func() []result
	// table writes a row per strategy, under a line of headings.
	table func(w io.Writer, rs []result)
	// scores are the figures of r that the verdict compares.
	scores func(r result) []score
}

// scenarios are the scenarios, in the order they print.
func scenarios() []scenario {
	return []scenario{startedUnderOverload(), capacityDrop(), slowService(), lowPrioritySpike(), ownCPU()}
}

// report is what a scenario printed: its title, table and verdicts.
func (sc scenario) report(rs []result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n", sc.title)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	sc.table(tw, rs)
	tw.Flush()
	for _, r := range rs {
		if r.role == ourOwn {
			fmt.Fprintln(&b, scoreVerdict(r, rs, sc.scores))
		}
	}
	return b.String()
}

// A score is one figure that the verdict compares: better is +1 if more
// is better, -1 if less is.
type score struct {
	label  string
	value  int
	better int
	unit   string
}

// scoreVerdict says where r, one of ours, is behind a peer of rs on a
// score: a peer's value better than r's.
func scoreVerdict(r result, rs []result, scores func(result) []score) string {
	var behind []string
	mine := scores(r)
	for _, p := range rs {
		if p.role != peer {
			continue
		}
		for i, s := range scores(p) {
			if (s.value-mine[i].value)*s.better > 0 {
				behind = append(behind, fmt.Sprintf("%s %d%s to %s's %d%s", s.label, mine[i].value, s.unit, p.name, s.value, s.unit))
			}
		}
	}
	if len(behind) == 0 {
		return r.name + " against failsafe-go: ahead or even on every figure"
	}
	return r.name + " against failsafe-go: behind on " + strings.Join(behind, "; ")
}

// tracked wraps an algorithm that probes and keeps the limit it leaves
// after each window, apart from the windows that ask for a probe: those
// leave a limit only for the probe to start from, and during the probe
// the limit in force is a quarter of the algorithm's. So tracked's limit
// is the algorithm's over time, probes apart, as package adaptive's
// behaviour tests read it.
type tracked struct {
	adaptive.Prober
	limit atomic.Int64
}

// The limiter's default bounds and initial limit, within which it keeps
// what an algorithm returns.
const ourMin, ourMax, ourInitial = 1, 200, 20

func (t *tracked) Update(limit float64, s adaptive.Sample) float64 {
	n := t.Prober.Update(limit, s)
	if !t.ProbeNext() && !math.IsNaN(n) && !math.IsInf(n, 0) {
		t.limit.Store(int64(min(max(n, ourMin), ourMax)))
	}
	return n
}

// newOurs returns package adaptive's limiter over inner with alg and
// opts, and a function that reads its limit: the algorithm's, probes
// apart, for one that probes; the limit in force for one that does not.
func newOurs(inner tower.Service[int, struct{}], alg func() adaptive.Algorithm, opts ...adaptive.Option) (*adaptive.Limiter[int, struct{}], func() int) {
	if _, ok := alg().(adaptive.Prober); !ok {
		l := adaptive.New(inner, alg, opts...)
		return l, l.Limit
	}
	t := &tracked{}
	t.limit.Store(ourInitial)
	l := adaptive.New(inner, func() adaptive.Algorithm {
		t.Prober = alg().(adaptive.Prober)
		return t
	}, opts...)
	return l, func() int { return int(t.limit.Load()) }
}

// load is an open loop of rate requests per second of one priority, sent
// from an instant of a run for length.
type load struct {
	rate         int
	from, length time.Duration
	prio         tower.Priority
}

// openRun measures ss at once, each in front of its own server whose
// capacity follows ps, with the same loads, and returns what each got:
// its outcomes ordered by when they were due, from the run's start.
func openRun(ps []phase, loads []load, ss []strategy) []result {
	results := make([]result, len(ss))
	start := time.Now()
	var wg sync.WaitGroup
	for i, s := range ss {
		b := newBackend(start, ps)
		svc, limit := s.protect(b.service())
		results[i].name, results[i].role = s.name, s.role
		wg.Go(func() { results[i].out = driveAll(svc, start, loads) })
		wg.Go(func() { results[i].samples = watch(b.requests, limit, start, span(ps)) })
	}
	wg.Wait()
	return results
}

// driveAll drives each of loads at once through svc, the k-th's schedule
// from a source seeded with seed+k, and returns their outcomes, due from
// start, in the order they were due.
func driveAll(svc tower.Service[int, struct{}], start time.Time, loads []load) []outcome {
	outs := make([][]outcome, len(loads))
	var wg sync.WaitGroup
	for k, ld := range loads {
		wg.Go(func() {
			out := drive(svc, start.Add(ld.from), scheduleFor(ld.rate, ld.length, seed+uint64(k)), ld.prio)
			for i := range out {
				out[i].due += ld.from
			}
			outs[k] = out
		})
	}
	wg.Wait()
	all := slices.Concat(outs...)
	slices.SortStableFunc(all, func(a, b outcome) int { return cmp.Compare(a.due, b.due) })
	return all
}

// limitSpread returns the least and the most limit sampled in [from, to).
func limitSpread(samples []sample, from, to time.Duration) (lo, hi int) {
	lo, hi = math.MaxInt, math.MinInt
	for _, s := range samples {
		if s.at >= from && s.at < to {
			lo, hi = min(lo, s.limit), max(hi, s.limit)
		}
	}
	return lo, hi
}

// spreadString prints a limit's spread: "13" or "13-15".
func spreadString(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// settledAt returns how long after from the sampled limit is within
// [lo, hi] at every sample from then until to, excluded: 0 if it is
// within at from already, -1 (never) if the last sample before to is
// outside.
func settledAt(samples []sample, from, to time.Duration, lo, hi int) time.Duration {
	at := time.Duration(-1)
	for _, s := range samples {
		if s.at < from || s.at >= to {
			continue
		}
		if s.limit < lo || s.limit > hi {
			at = -1
		} else if at < 0 {
			at = s.at - from
		}
	}
	return at
}

// meanQueued is the mean of the requests in the server beyond its
// workers, over the samples in [from, to).
func meanQueued(samples []sample, from, to time.Duration, workers int) float64 {
	sum, n := 0, 0
	for _, s := range samples {
		if s.at >= from && s.at < to {
			sum += max(s.inFlight-workers, 0)
			n++
		}
	}
	return float64(sum) / float64(n)
}

// figures are the figures of some requests.
type figures struct {
	sent, shed int
	answered   int           // served within clientTimeout, in time for its client
	good       int           // served within objective
	p50, p99   time.Duration // of the requests not shed, as phaseStats's
	p99All     time.Duration // of every request, shed or not
}

// figuresOf returns the figures of the requests of out sent in [from, to)
// that keep selects.
func figuresOf(out []outcome, from, to time.Duration, keep func(outcome) bool) figures {
	var f figures
	var lat, all []time.Duration
	for _, o := range sentBetween(out, from, to) {
		if !keep(o) {
			continue
		}
		f.sent++
		all = append(all, o.latency)
		switch {
		case o.kind == shed:
			f.shed++
			continue
		case o.kind == served && o.latency <= clientTimeout:
			f.answered++
			if o.latency <= objective {
				f.good++
			}
		}
		lat = append(lat, o.latency)
	}
	slices.Sort(lat)
	slices.Sort(all)
	f.p50, f.p99, f.p99All = rank(lat, 50), rank(lat, 99), rank(all, 99)
	return f
}

func every(outcome) bool { return true }

// goodput is f's good answers per second over d, in percent of a
// capacity of perSecond.
func goodput(f figures, perSecond int, d time.Duration) int {
	return roundDiv(100*f.good*int(time.Second), perSecond*int(d))
}

// percent is 100a/b, rounded, as a string; "-" if b is 0.
func percent(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%d%%", roundDiv(100*a, b))
}

func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }
