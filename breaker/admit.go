package breaker

import (
	"context"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/mono"
)

// admit waits, bounded by ctx, until the breaker admits a request, and
// returns the period it was admitted in: a closed one, or a half-open one
// whose probe place it holds.
func (b *Breaker[Req, Res]) admit(ctx context.Context) (*period[Req, Res], error) {
	waiting := false
	for {
		p, wake, err := b.tryAdmit(ctx, waiting)
		if p != nil || err != nil {
			return p, err
		}
		waiting = true
		select {
		case <-wake:
		case <-ctx.Done():
		}
	}
}

// tryAdmit admits a request if the breaker can now, even if ctx is done;
// otherwise it returns ctx.Err() if ctx is done, or a channel closed when
// the breaker may admit one, with the caller counted as a waiter. waiting
// says the caller was counted already.
func (b *Breaker[Req, Res]) tryAdmit(ctx context.Context, waiting bool) (p *period[Req, Res], wake <-chan struct{}, err error) {
	b.do(func() (changed bool) {
		if waiting {
			b.waiters--
		}
		if p, changed = b.admitLocked(); p != nil {
			b.idleTimer()
			return changed
		}
		if err = ctx.Err(); err != nil {
			b.idleTimer()
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
	return p, wake, err
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

// arm sets the timer to wake the waiters when p's delay ends. b.mu is
// held.
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

// idleTimer stops the timer if nobody waits for it. b.mu is held.
func (b *Breaker[Req, Res]) idleTimer() {
	if b.waiters == 0 && b.timerFor != nil {
		b.timer.Stop()
		b.timerFor = nil
	}
}

// wakeLocked wakes every waiting Ready, to look again. b.mu is held.
func (b *Breaker[Req, Res]) wakeLocked() {
	if b.wake != nil {
		close(b.wake)
		b.wake = nil
	}
}

// innerReady waits for the inner service for a request admitted in
// period p, and returns its permit wrapped. again reports that the
// breaker moved on meanwhile: then everything is given back, and Ready
// starts over rather than send to a backend the breaker gave up on.
func (b *Breaker[Req, Res]) innerReady(ctx context.Context, p *period[Req, Res]) (_ tower.Permit[Req, Res], again bool, _ error) {
	if p.state == HalfOpen {
		return b.probeReady(ctx, p)
	}
	ip, err := b.inner.Ready(ctx)
	if err != nil {
		return ip, false, err
	}
	return b.wrap(p, ip)
}

// probeReady is innerReady for a probe: it gives the probe's place back
// if inner's Ready fails or panics.
func (b *Breaker[Req, Res]) probeReady(ctx context.Context, p *period[Req, Res]) (_ tower.Permit[Req, Res], again bool, _ error) {
	held := true
	defer func() {
		if held {
			p.end(ignored)
		}
	}()
	ip, err := b.inner.Ready(ctx)
	if err != nil {
		return ip, false, err
	}
	held = false
	return b.wrap(p, ip)
}

// wrap wraps ip, admitted in period p, if p is still current; otherwise
// it releases ip, gives p's admission back, and reports again.
func (b *Breaker[Req, Res]) wrap(p *period[Req, Res], ip tower.Permit[Req, Res]) (tower.Permit[Req, Res], bool, error) {
	if b.cur.Load() != p {
		ip.Release()
		return tower.Permit[Req, Res]{}, true, nil
	}
	return b.wraps.Wrap(p, ip), false, nil
}
