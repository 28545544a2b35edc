package adaptive_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/loadshed"
)

// The scenarios: a dependency with a fixed pool of workers behind the
// limit, offered more than it can serve, on synctest's clock. Each runs
// the same way every time: a request's worker and its instants are
// decided when it arrives, from the instants the workers are free, never
// by which goroutine runs first.

// A stage is a stretch of a scenario during which the dependency has a
// fixed number of workers and service time.
type stage struct {
	until   time.Duration // from the scenario's start
	workers int
	service time.Duration
}

// pool is the dependency: workers that each serve one request at a time,
// first come first served. A request whose caller's deadline comes before
// a worker would take it gives up then, without taking a worker's time; a
// request taken runs to its end.
type pool struct {
	start  time.Time
	stages []stage

	// Every slowEvery-th request a worker takes, if slowEvery is not 0,
	// takes slow rather than the stage's service time: a heavy tail.
	slowEvery int
	slow      time.Duration

	mu    sync.Mutex
	free  []time.Time // when each worker is next free
	taken int         // requests taken by a worker
}

func newPool(start time.Time, stages ...stage) *pool {
	n := 0
	for _, s := range stages {
		n = max(n, s.workers)
	}
	p := &pool{start: start, stages: stages, free: make([]time.Time, n)}
	for i := range p.free {
		p.free[i] = start
	}
	return p
}

// at returns the stage in force at t.
func (p *pool) at(t time.Time) stage {
	d := t.Sub(p.start)
	for _, s := range p.stages {
		if d < s.until {
			return s
		}
	}
	return p.stages[len(p.stages)-1]
}

// serve has a worker serve a request that arrives now.
func (p *pool) serve(ctx context.Context) error {
	now := time.Now()
	p.mu.Lock()
	s := p.at(now)
	w := 0
	for i := range s.workers {
		if p.free[i].Before(p.free[w]) {
			w = i
		}
	}
	begin := p.free[w]
	if begin.Before(now) {
		begin = now
	}
	if d, ok := ctx.Deadline(); ok && !begin.Before(d) {
		p.mu.Unlock()
		<-ctx.Done()
		return ctx.Err()
	}
	p.taken++
	service := p.at(begin).service
	if p.slowEvery > 0 && p.taken%p.slowEvery == 0 {
		service = p.slow
	}
	end := begin.Add(service)
	p.free[w] = end
	p.mu.Unlock()
	t := time.NewTimer(time.Until(end))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *pool) service() tower.Service[int, int] {
	return tower.ServiceFunc[int, int](func(ctx context.Context, req int) (int, error) {
		return req, p.serve(ctx)
	})
}

// A result is what a scenario's requests got and what its limit did.
type result struct {
	served, shed, failed []time.Duration // answers' latencies, by kind, in order of arrival
	servedAt             []time.Duration // when each served request was answered, from the start
	limits               []int           // the limit every 100ms, from the start
}

// servedIn counts the requests answered within [from, to).
func (r *result) servedIn(from, to time.Duration) int {
	n := 0
	for _, at := range r.servedAt {
		if at >= from && at < to {
			n++
		}
	}
	return n
}

const sampleEvery = 100 * time.Millisecond

// openLoop sends rate requests per second through svc for length, each
// at a random instant of its own slot (from a seeded source, so never
// two at once), each with deadline, and the priority prio(i) for the i-th.
func openLoop(svc tower.Service[int, int], start time.Time, rate int, length, deadline time.Duration, prio func(i int) tower.Priority, res *result) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	rng := rand.New(rand.NewPCG(uint64(rate), 1))
	slot := time.Second / time.Duration(rate)
	for i := range int(length / slot) {
		due := start.Add(time.Duration(i)*slot + time.Duration(rng.Int64N(int64(slot))))
		time.Sleep(time.Until(due))
		wg.Go(func() {
			ctx, cancel := context.WithDeadline(tower.WithPriority(context.Background(), prio(i)), due.Add(deadline))
			defer cancel()
			_, err := tower.Call(ctx, svc, i)
			d := time.Since(due)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				res.served = append(res.served, d)
				res.servedAt = append(res.servedAt, time.Since(start))
			case tower.IsOverloaded(err):
				res.shed = append(res.shed, d)
			default:
				res.failed = append(res.failed, d)
			}
		})
	}
	wg.Wait()
}

// sampleLimits records l's limit every sampleEvery for length from start.
func sampleLimits(l interface{ Limit() int }, start time.Time, length time.Duration, res *result) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Go(func() {
		for at := time.Duration(0); at < length; at += sampleEvery {
			time.Sleep(time.Until(start.Add(at)))
			res.limits = append(res.limits, l.Limit())
		}
	})
	return &wg
}

// p99 returns the 99th percentile of ds.
func p99(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	return s[(len(s)*99+99)/100-1]
}

// overload runs the open loop of rate requests per second for length
// through LoadShed > adaptive.New(alg, opts) over a pool with stages, each
// request with a deadline of a second, and returns what happened.
func overload(alg func() adaptive.Algorithm, rate int, length time.Duration, stages []stage, opts ...adaptive.Option) *result {
	start := time.Now()
	p := newPool(start, stages...)
	l := adaptive.New(p.service(), alg, opts...)
	svc := loadshed.New[int, int](l)
	res := &result{}
	sampled := sampleLimits(l, start, length, res)
	openLoop(svc, start, rate, length, time.Second, func(int) tower.Priority { return tower.PriorityNormal }, res)
	sampled.Wait()
	return res
}

// ownDelay is a process's own CPU, as a scenario's stand-in: cpus cores
// that each request needs for work before and after its call to the
// dependency, first come first served, and the mean time the requests
// waited for one since the last reading.
type ownDelay struct {
	mu      sync.Mutex
	free    []time.Time
	work    time.Duration
	waited  time.Duration
	counted int
	reads   atomic.Int64
}

func newOwnDelay(start time.Time, cpus int, work time.Duration) *ownDelay {
	o := &ownDelay{free: make([]time.Time, cpus), work: work}
	for i := range o.free {
		o.free[i] = start
	}
	return o
}

// run takes a core for the work, and returns how long it waited for one.
func (o *ownDelay) run() {
	now := time.Now()
	o.mu.Lock()
	c := 0
	for i := range o.free {
		if o.free[i].Before(o.free[c]) {
			c = i
		}
	}
	begin := o.free[c]
	if begin.Before(now) {
		begin = now
	}
	end := begin.Add(o.work)
	o.free[c] = end
	o.waited += begin.Sub(now)
	o.counted++
	o.mu.Unlock()
	time.Sleep(time.Until(end))
}

// mean is the function for adaptive.WithOwnDelay: the mean wait per call
// since the last reading, both of a call's waits.
func (o *ownDelay) mean() time.Duration {
	o.reads.Add(1)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.counted == 0 {
		return 0
	}
	d := 2 * o.waited / time.Duration(o.counted)
	o.waited, o.counted = 0, 0
	return d
}

// traced wraps an algorithm and records each window's end, the limit the
// algorithm left, and whether the window was a probe or asked for one:
// the algorithm's limit over time, apart from the limits that windows
// asking for a probe leave for the probe to start from.
type traced struct {
	adaptive.Prober
	start   time.Time
	mu      sync.Mutex
	windows []tracedWindow
}

type tracedWindow struct {
	at    time.Duration
	limit int
	probe bool // the window was a probe
	asked bool // the window asked for a probe: its limit is only the probe's to start from
}

func trace(alg func() adaptive.Algorithm, start time.Time) (func() adaptive.Algorithm, *traced) {
	tr := &traced{start: start}
	return func() adaptive.Algorithm {
		tr.Prober = alg().(adaptive.Prober)
		return tr
	}, tr
}

func (t *traced) Update(limit float64, s adaptive.Sample) float64 {
	n := t.Prober.Update(limit, s)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.windows = append(t.windows, tracedWindow{time.Since(t.start), int(n), s.Probe, t.ProbeNext()})
	return n
}

// limitAt returns the algorithm's limit at d: the one the last window
// ending at or before d left, or the initial 20.
func (t *traced) limitAt(d time.Duration) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 20
	for _, w := range t.windows {
		if w.at > d {
			break
		}
		if !w.asked {
			n = w.limit
		}
	}
	return n
}

// settle returns the first window's end in [from, until) from which the
// algorithm's limit stays within [lo, hi] up to until, or -1.
func (t *traced) settle(from, until time.Duration, lo, hi int) time.Duration {
	at := time.Duration(-1)
	if n := t.limitAt(from); n >= lo && n <= hi {
		at = from
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, w := range t.windows {
		if w.asked || w.at < from || w.at >= until {
			continue
		}
		if w.limit < lo || w.limit > hi {
			at = -1
		} else if at < 0 {
			at = w.at
		}
	}
	return at
}

// spread returns the least and the most limit the algorithm left in
// windows ending within [from, until).
func (t *traced) spread(from, until time.Duration) (lo, hi int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	lo, hi = math.MaxInt, 0
	for _, w := range t.windows {
		if !w.asked && w.at >= from && w.at < until {
			lo, hi = min(lo, w.limit), max(hi, w.limit)
		}
	}
	return lo, hi
}

// probes counts the probe windows that ended within [from, until).
func (t *traced) probes(from, until time.Duration) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, w := range t.windows {
		if w.probe && w.at >= from && w.at < until {
			n++
		}
	}
	return n
}
