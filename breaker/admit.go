package breaker

import (
	"context"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/guard"
	"github.com/towergo/tower/internal/mono"
)

// admit waits, bounded by ctx, until the breaker admits a request, and
// returns the period it was admitted in: a closed one, or a half-open one
// whose probe place it holds. It admits one when it can, even if ctx is
// done.
func (b *Breaker[Req, Res]) admit(ctx context.Context) (p *period[Req, Res], err error) {
	for waiting := false; ; waiting = true {
		var wake chan struct{}
		b.do(func() (changed bool) {
			if waiting {
				b.waiters--
			}
			if p, changed = b.admitLocked(); p == nil {
				err = ctx.Err()
			}
			if p != nil || err != nil {
				if b.waiters == 0 && b.timerFor != nil { // nobody waits for it
					b.timer.Stop()
					b.timerFor = nil
				}
				return changed
			}
			b.waiters++
			if cur := b.cur.Load(); cur.state == Open && cur.until != forever && b.timerFor != cur {
				b.arm(cur)
			}
			if b.wake == nil {
				b.wake = make(chan struct{})
			}
			wake = b.wake
			return changed
		})
		if p != nil || err != nil {
			return p, err
		}
		select {
		case <-wake:
		case <-ctx.Done():
		}
	}
}

// admitLocked admits a request if the breaker can now, and reports
// whether it queued an event. b.mu is held.
func (b *Breaker[Req, Res]) admitLocked() (*period[Req, Res], bool) {
	p := b.cur.Load()
	if p.state == Closed {
		return p, false
	}
	if p.state == Open {
		if mono.Now() < p.until {
			return nil, false
		}
		if b.refused() { // stay open, for another delay as long
			return nil, b.openLocked(b.trips)
		}
		hp := &period[Req, Res]{b: b, state: HalfOpen, probes: 1}
		return hp, b.set(hp)
	}
	if p.probes >= b.opts.probes {
		return nil, false
	}
	if b.refused() {
		if p.probes > 0 {
			return nil, false // a probe under way wakes this Ready as it ends
		}
		return nil, b.openLocked(b.trips)
	}
	p.probes++
	return p, false
}

// refused reports whether the budget, if any, refuses a probe.
func (b *Breaker[Req, Res]) refused() bool {
	return b.opts.budget != nil && !b.opts.budget.Withdraw()
}

// arm sets the timer to wake the waiters at the end of p. b.mu is held.
func (b *Breaker[Req, Res]) arm(p *period[Req, Res]) {
	d := p.until - mono.Now()
	if b.timer == nil {
		b.timer = time.AfterFunc(d, func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.timerFor = nil
			b.wakeLocked()
		})
	} else {
		b.timer.Reset(d)
	}
	b.timerFor = p
}

// wakeLocked wakes every waiting Ready, to look again. b.mu is held.
func (b *Breaker[Req, Res]) wakeLocked() {
	if b.wake != nil {
		close(b.wake)
		b.wake = nil
	}
}

// innerReady returns the inner service's permit for a request admitted in
// period p, wrapped; or again if the breaker moved on meanwhile: then
// Ready starts over rather than send to a backend the breaker gave up on.
func (b *Breaker[Req, Res]) innerReady(ctx context.Context, p *period[Req, Res]) (_ tower.Permit[Req, Res], again bool, _ error) {
	var ip tower.Permit[Req, Res]
	var err error
	if p.state == HalfOpen {
		ip, err = b.probeReady(ctx, p)
	} else {
		ip, err = b.inner.Ready(ctx)
	}
	if err != nil {
		return ip, false, err
	}
	if b.cur.Load() != p {
		ip.Release()
		return tower.Permit[Req, Res]{}, true, nil
	}
	return b.wraps.Wrap(p, ip), false, nil
}

// probeReady is the inner service's Ready for a probe: it gives the
// probe's place back if that fails or panics.
func (b *Breaker[Req, Res]) probeReady(ctx context.Context, p *period[Req, Res]) (ip tower.Permit[Req, Res], err error) {
	guard.Undo(func() { ip, err = b.inner.Ready(ctx) }, func() { p.end(ignored) })
	if err != nil {
		p.end(ignored)
	}
	return ip, err
}
