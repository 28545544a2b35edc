package balance

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/internal/mono"
	"github.com/towergo/tower/metrics"
)

// detector is a balancer's outlier detection. Times are package mono's.
type detector[K comparable] struct {
	c        outlierConfig
	maxTimes int // the multiplier beyond which an ejection is MaxEjectionTime anyway
	sink     metrics.Sink
	report   func(error)
	repoll   func(K) bool
	start    time.Duration // intervals end at start + k*interval
	armed    atomic.Bool   // an evaluation is scheduled, or being scheduled

	mu      sync.Mutex
	eps     []*outlierState[K]
	ejected int             // endpoints in eps that are out
	timer   *time.Timer     // runs evaluateOnTimer at the end of an interval
	running <-chan struct{} // closed when the last evaluation started ends
	closed  bool
}

// outlierState is one endpoint's. The atomics are used on the request
// path without the lock.
type outlierState[K comparable] struct {
	key         K
	out         atomic.Bool   // ejected
	epoch       atomic.Uint64 // moves on at each ejection and return
	consecutive atomic.Int64  // failures in a row
	counts      atomic.Uint64 // this interval's calls<<32 | successes

	// Guarded by the detector's lock.
	index int           // in eps; -1 once forgotten
	until time.Duration // the end of its last ejection
	times int           // the ejection multiplier: how many in a row, decayed
}

func newDetector[K comparable](c outlierConfig, sink metrics.Sink, report func(error), repoll func(K) bool) *detector[K] {
	d := &detector[K]{c: c, maxTimes: int(c.max / c.base), sink: sink, report: report, repoll: repoll, start: mono.Now(), running: doneCtx.Done()}
	if c.max%c.base != 0 {
		d.maxTimes++
	}
	return d
}

func (d *detector[K]) add(st *outlierState[K]) {
	d.mu.Lock()
	defer d.mu.Unlock()
	st.index = len(d.eps)
	d.eps = append(d.eps, st)
}

// forget stops watching st, which has left the balancer: the cache's
// removal handler calls it once.
func (d *detector[K]) forget(st *outlierState[K]) {
	d.mu.Lock()
	last := len(d.eps) - 1
	moved := d.eps[last]
	d.eps[st.index], moved.index = moved, st.index
	d.eps[last] = nil
	d.eps = d.eps[:last]
	st.index = -1
	out := st.out.Swap(false)
	if out {
		d.ejected--
	}
	d.mu.Unlock()
	if out {
		d.add1(-1)
	}
}

func (d *detector[K]) add1(delta int) {
	if d.sink != nil && delta != 0 {
		d.sink.Add(metrics.Ejected, int64(delta))
	}
}

// record counts the end of a call to st that started in epoch. A call
// that started before st's last ejection or return, or ended while st was
// out, is not counted: an endpoint comes back with a clean slate.
func (d *detector[K]) record(st *outlierState[K], epoch uint64, failed bool, err error) {
	if st.epoch.Load() != epoch || st.out.Load() {
		return
	}
	if !failed {
		if st.consecutive.Load() != 0 {
			st.consecutive.Store(0)
		}
		if d.c.minHosts > 0 { // the success-rate detector is on
			st.counts.Add(1<<32 | 1)
			d.arm()
		}
		return
	}
	if d.c.minHosts > 0 {
		st.counts.Add(1 << 32)
		d.arm()
	}
	if d.c.consecutive > 0 && st.consecutive.Add(1) >= d.c.consecutive {
		// Past the count, every failure tries again: an ejection refused
		// for the share happens as soon as there is room.
		d.ejectConsecutive(st, epoch, err)
	}
}

// ejectConsecutive ejects st if it is still in, in epoch, and the share
// allows.
func (d *detector[K]) ejectConsecutive(st *outlierState[K], epoch uint64, err error) {
	d.mu.Lock()
	now := mono.Now()
	returned := d.expireLocked(now)
	var evs []*Ejection[K]
	if st.index >= 0 && !st.out.Load() && st.epoch.Load() == epoch {
		if ev := d.ejectLocked(st, now, ReasonConsecutiveFailures); ev != nil {
			ev.Err = err
			evs = []*Ejection[K]{ev}
		}
	}
	d.mu.Unlock()
	d.announce(returned, evs)
}

// ejectLocked ejects st, which is in, if the share allows, and returns
// the report, or nil. The multiplier decays by one per interval st has
// stayed in since its last ejection ended.
func (d *detector[K]) ejectLocked(st *outlierState[K], now time.Duration, reason EjectionReason) *Ejection[K] {
	// Out at once: the share of the set, rounded down, at least one, and
	// never all of them. 0.29*100 is 28.999999999999996.
	n := len(d.eps)
	if d.ejected >= min(max(int(d.c.share*float64(n)+1e-9), 1), n-1) {
		return nil
	}
	times := st.times
	if times > 0 {
		times = max(times-int((now-st.until)/d.c.interval), 0)
	}
	times = min(times+1, d.maxTimes)
	dur := d.c.max
	if time.Duration(times) <= d.c.max/d.c.base {
		dur = d.c.base * time.Duration(times)
	}
	st.times, st.until = times, mono.Add(now, dur)
	d.setOutLocked(st, true)
	return &Ejection[K]{Key: st.key, Reason: reason, Duration: dur}
}

// setOutLocked ejects st or lets it back in, with a clean slate.
func (d *detector[K]) setOutLocked(st *outlierState[K], out bool) {
	if out {
		d.ejected++
	} else {
		d.ejected--
	}
	st.out.Store(out)
	st.epoch.Add(1)
	st.consecutive.Store(0)
	st.counts.Store(0)
}

// expireLocked lets back in every endpoint whose time is up, and returns
// how many.
func (d *detector[K]) expireLocked(now time.Duration) int {
	n := 0
	for _, st := range d.eps {
		if st.out.Load() && st.until <= now {
			d.setOutLocked(st, false)
			n++
		}
	}
	return n
}

// announce reports, without the lock, what an ejection or an evaluation
// did.
func (d *detector[K]) announce(returned int, evs []*Ejection[K]) {
	defer guard.Each(evs, d.announceOne) // every one, even if a handler panics
	d.add1(-returned)
}

func (d *detector[K]) announceOne(ev *Ejection[K]) {
	defer d.report(ev)
	defer d.add1(1)
	d.repoll(ev.Key) // first: a ready endpoint ejected stops being picked now
}

// waitOut waits, as long as ctx lasts, until st is not out, and lets it
// back in when its time is up. With a done ctx it only looks: the cache
// may hold its lock, under which the metric must not be reported, and its
// driver will let st back in.
func (d *detector[K]) waitOut(ctx context.Context, st *outlierState[K]) error {
	for {
		d.mu.Lock()
		until, out := st.until, st.out.Load()
		if out && ctx.Err() == nil && mono.Now() >= until {
			d.setOutLocked(st, false)
			d.mu.Unlock()
			d.add1(-1)
			return nil
		}
		d.mu.Unlock()
		if !out {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		select {
		case <-time.After(until - mono.Now()):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
