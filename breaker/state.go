package breaker

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/mono"
	"github.com/towergo/tower/metrics"
)

// State is the state of a [Breaker].
type State uint8

const (
	// Closed is the healthy state: requests go through.
	Closed State = iota + 1
	// Open is the tripped state: no request goes through.
	Open
	// HalfOpen is the state after the open delay: a few probes go through.
	HalfOpen
)

// String returns the state's name, "closed", "open" or "half-open", or
// "State(n)" for a value that is none of them.
func (s State) String() string {
	if s >= Closed && s <= HalfOpen {
		return [...]string{"closed", "open", "half-open"}[s-Closed]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// forever is the end of an open delay that never ends: Isolate's.
const forever = time.Duration(math.MaxInt64)

// An outcome is what a call's result says of the inner service.
type outcome uint8

const (
	ignored   outcome = iota // nothing: released unused, or the caller gave up
	succeeded                // the service answered
	failed                   // the classifier counts it a failure, or the call panicked
)

// A period is one stay of the breaker in a state. Each permit carries the
// period it was admitted in (as its tower.Wrapper), and its result counts
// only while that period is current.
type period[Req, Res any] struct {
	b      *Breaker[Req, Res]
	state  State
	until  time.Duration // Open: the end of the delay, on mono's scale
	consec atomic.Int64  // Closed: failures in a row
	// HalfOpen, guarded by b.mu: probe permits out, and probes that
	// succeeded.
	probes, successes int
}

// An event is a change of state, to tell the sink and the callback.
type event struct{ from, to State }

// CallWrapped sends req on inner and records the result.
func (p *period[Req, Res]) CallWrapped(ctx context.Context, inner tower.Permit[Req, Res], req Req) (res Res, err error) {
	o := failed // a call that panics is a failure
	defer func() { p.end(o) }()
	res, err = inner.Call(ctx, req)
	o = ignored // a classifier that panics records nothing
	if p.b.failure(res, err) {
		o = failed
	} else if err == nil || ctx.Err() == nil { // else the caller gave up
		o = succeeded
	}
	return res, err
}

// ReleaseWrapped gives back a permit released unused.
func (p *period[Req, Res]) ReleaseWrapped(inner tower.Permit[Req, Res]) {
	defer p.end(ignored)
	inner.Release()
}

// end records the outcome of a permit of p.
func (p *period[Req, Res]) end(o outcome) {
	b := p.b
	if p.state == HalfOpen {
		b.do(func() bool { return b.probeEndedLocked(p, o) })
		return
	}
	if o == ignored {
		return
	}
	if n := b.opts.consecutive; n > 0 {
		if o == failed {
			// Past n too, if a panic in the random source stopped a trip.
			if p.consec.Add(1) >= int64(n) {
				b.do(func() bool { return b.cur.Load() == p && b.openLocked(b.trips+1) })
			}
		} else if p.consec.Load() != 0 { // no write, and no cache line taken, while all is well
			p.consec.Store(0)
		}
	}
	if b.window != nil {
		b.do(func() bool {
			return b.cur.Load() == p && b.window.record(mono.Now(), o == failed) && b.openLocked(b.trips+1)
		})
	}
}

// probeEndedLocked records the outcome of a probe of p, and reports
// whether the state changed. b.mu is held.
func (b *Breaker[Req, Res]) probeEndedLocked(p *period[Req, Res], o outcome) bool {
	if b.cur.Load() != p {
		return false // a late probe: its period is over
	}
	p.probes--
	if o == failed {
		return b.openLocked(b.trips + 1)
	}
	b.wakeLocked() // a probe's place is free
	if o == succeeded {
		p.successes++
		if p.successes >= b.opts.successes {
			return b.closeLocked()
		}
	}
	return false
}

// openLocked opens the breaker for the delay after the trips-th trip in a
// row (b.trips again when the budget refused a probe). b.mu is held.
func (b *Breaker[Req, Res]) openLocked(trips int) bool {
	d := b.opts.delay(trips, b.opts.random()) // user code first: a panic changes nothing
	b.trips = trips
	return b.set(&period[Req, Res]{b: b, state: Open, until: mono.Add(mono.Now(), d)})
}

// closeLocked closes the breaker. b.mu is held.
func (b *Breaker[Req, Res]) closeLocked() bool {
	b.trips = 0
	if b.window != nil {
		b.window.reset(mono.Now())
	}
	return b.set(&period[Req, Res]{b: b, state: Closed})
}

// set makes p current, wakes the waiters, and queues the change of state
// if any and someone is told, reporting whether it did. b.mu is held.
func (b *Breaker[Req, Res]) set(p *period[Req, Res]) bool {
	from := b.cur.Load().state
	b.cur.Store(p)
	b.wakeLocked()
	if from == p.state || b.opts.sink == nil && b.opts.onChange == nil {
		return false
	}
	b.events = append(b.events, event{from, p.state})
	return true
}

// do runs f under b.mu, and tells the events f queued, if it reports any.
func (b *Breaker[Req, Res]) do(f func() bool) {
	if b.locked(f) {
		b.tell()
	}
}

func (b *Breaker[Req, Res]) locked(f func() bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return f()
}

// tell tells the queued events one at a time, in order, outside the lock;
// a goroutine that finds another telling leaves its events to it.
func (b *Breaker[Req, Res]) tell() {
	for {
		b.mu.Lock()
		if b.telling || len(b.events) == 0 {
			b.mu.Unlock()
			return
		}
		ev := b.events[0]
		b.events = append(b.events[:0], b.events[1:]...)
		b.telling = true
		b.mu.Unlock()
		b.tellOne(ev)
	}
}

func (b *Breaker[Req, Res]) tellOne(ev event) {
	defer b.locked(func() bool { b.telling = false; return false }) // a panic in the callback too
	if s := b.opts.sink; s != nil {
		if ev.from == Closed {
			s.Add(metrics.Open, 1)
		}
		if ev.to == Closed {
			s.Add(metrics.Open, -1)
		}
		if ev.to == Open {
			s.Add(metrics.Tripped, 1)
		}
	}
	if f := b.opts.onChange; f != nil {
		f(ev.from, ev.to)
	}
}
