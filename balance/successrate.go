package balance

import (
	"cmp"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/internal/mono"
	"github.com/towergo/tower/internal/stripe"
)

// stripedCounts counts calls and successes over cache lines picked by the
// goroutine's stack (package stripe), so callers on many CPUs do not
// contend on one line. Each line holds calls<<32 | successes.
type stripedCounts struct {
	_ [64]byte // off the line of the fields read on every call
	l [8]struct {
		v atomic.Uint64
		_ [56]byte
	}
}

func (c *stripedCounts) add(x uint64) { c.l[stripe.Hint()%uintptr(len(c.l))].v.Add(x) }

// take returns the calls and successes counted, and starts again at zero.
// An addition under way counts in this take or the next, never both.
func (c *stripedCounts) take() (calls, ok uint64) {
	for i := range c.l {
		x := c.l[i].v.Swap(0)
		calls += x >> 32
		ok += x & math.MaxUint32
	}
	return calls, ok
}

type rateSample[K comparable] struct {
	st   *outlierState[K]
	rate float64
}

// arm schedules the evaluation of the interval under way at its end, if
// none is: a balancer that gets no calls runs no timer. The k-th interval
// ends k intervals after the balancer's construction.
func (d *detector[K]) arm() {
	if d.armed.Load() || !d.armed.CompareAndSwap(false, true) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	now := mono.Now()
	end := d.start + ((now-d.start)/d.c.interval+1)*d.c.interval
	if d.timer == nil {
		d.timer = time.AfterFunc(end-now, d.evaluateOnTimer)
	} else {
		d.timer.Reset(end - now)
	}
}

// whereEvaluate is where a panic in code the evaluation calls happened: a
// handler, the sink, or an endpoint's Ready asked again.
const whereEvaluate = "the outlier detection's evaluation, on a balancer's timer goroutine"

// evaluateOnTimer evaluates the interval that has just ended, on the
// timer's goroutine, where a panic has no caller to go to and is logged.
func (d *detector[K]) evaluateOnTimer() {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	running := make(chan struct{})
	d.running = running
	d.armed.Store(false) // before the counts are taken: a call after arms the next
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.running = nil
		d.mu.Unlock()
		close(running)
	}()
	if perr := guard.Call(whereEvaluate, d.evaluateNow); perr != nil {
		guard.Orphan(perr)
	}
}

// evaluateNow evaluates the interval that has just ended.
func (d *detector[K]) evaluateNow() { d.evaluate(mono.Now()) }

// close stops the timer, and returns a channel closed when the
// evaluation under way, if any, ends (nil if none is).
func (d *detector[K]) close() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.timer != nil {
		d.timer.Stop()
	}
	return d.running
}

// evaluate compares the success rates of the endpoints that had the
// volume in the interval, ejects the outliers, worst first, as far as the
// share allows, and starts the next interval's counts.
func (d *detector[K]) evaluate(now time.Duration) {
	d.mu.Lock()
	returned := d.expireLocked(now)
	d.rates = d.rates[:0]
	for _, st := range d.eps {
		calls, ok := st.counts.take()
		if !st.out.Load() && calls >= uint64(d.c.volume) {
			d.rates = append(d.rates, rateSample[K]{st, float64(ok) / float64(calls)})
		}
	}
	var evs []*Ejection[K]
	if len(d.rates) >= d.c.minHosts {
		threshold := d.thresholdLocked()
		slices.SortStableFunc(d.rates, func(a, b rateSample[K]) int { return cmp.Compare(a.rate, b.rate) })
		for _, r := range d.rates {
			if r.rate >= threshold {
				break
			}
			ev := d.ejectLocked(r.st, now, ReasonSuccessRate)
			if ev == nil {
				break // the share is used up
			}
			ev.SuccessRate, ev.Threshold = r.rate, threshold
			evs = append(evs, ev)
		}
	}
	clear(d.rates) // let go of the states
	d.mu.Unlock()
	d.announce(returned, evs)
}

// thresholdLocked returns the success rate below which an endpoint of
// d.rates is an outlier: the mean less the factor times the (population)
// standard deviation, as Envoy computes it.
func (d *detector[K]) thresholdLocked() float64 {
	n := float64(len(d.rates))
	sum := 0.0
	for _, r := range d.rates {
		sum += r.rate
	}
	mean := sum / n
	variance := 0.0
	for _, r := range d.rates {
		dev := r.rate - mean
		variance += dev * dev
	}
	return mean - d.c.stdevFactor*math.Sqrt(variance/n)
}
