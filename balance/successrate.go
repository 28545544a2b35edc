package balance

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/internal/mono"
)

type rateSample[K comparable] struct {
	st   *outlierState[K]
	rate float64
}

// arm schedules the evaluation of the interval under way at its end, if
// none is: a balancer that gets no calls runs no timer.
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

const whereEvaluate = "the outlier detection's evaluation, on a balancer's timer goroutine"

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
	defer close(running)
	guard.Orphan(guard.Call(whereEvaluate, func() { d.evaluate(mono.Now()) }))
}

// close stops the timer, and returns a channel closed when the last
// evaluation started has ended.
func (d *detector[K]) close() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.timer != nil {
		d.timer.Stop()
	}
	return d.running
}

// evaluate ejects the outliers among the endpoints that had the volume in
// the interval, worst first, as far as the share allows.
func (d *detector[K]) evaluate(now time.Duration) {
	d.mu.Lock()
	returned := d.expireLocked(now)
	var rates []rateSample[K]
	for _, st := range d.eps {
		x := st.counts.Swap(0)
		calls, ok := x>>32, x&math.MaxUint32
		if !st.out.Load() && calls >= uint64(d.c.volume) {
			rates = append(rates, rateSample[K]{st, float64(ok) / float64(calls)})
		}
	}
	var evs []*Ejection[K]
	if len(rates) >= d.c.minHosts {
		threshold := threshold(rates, d.c.stdevFactor)
		slices.SortStableFunc(rates, func(a, b rateSample[K]) int { return cmp.Compare(a.rate, b.rate) })
		for _, r := range rates {
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
	d.mu.Unlock()
	d.announce(returned, evs)
}

// threshold is Envoy's: the mean less factor times the (population)
// standard deviation.
func threshold[K comparable](rates []rateSample[K], factor float64) float64 {
	n := float64(len(rates))
	sum := 0.0
	for _, r := range rates {
		sum += r.rate
	}
	mean := sum / n
	variance := 0.0
	for _, r := range rates {
		dev := r.rate - mean
		variance += dev * dev
	}
	return mean - factor*math.Sqrt(variance/n)
}
