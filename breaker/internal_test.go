package breaker

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
)

// delay is min(base·2^(trips-1), max), less jitter·r of it; trips far
// past the cap do not overflow.
func TestDelay(t *testing.T) {
	o := options{base: time.Second, max: 10 * time.Second}
	for _, tt := range []struct {
		trips  int
		jitter float64
		r      float64
		want   time.Duration
	}{
		{1, 0, 0, time.Second},
		{2, 0, 0, 2 * time.Second},
		{3, 0, 0, 4 * time.Second},
		{4, 0, 0, 8 * time.Second},
		{5, 0, 0, 10 * time.Second},
		{64, 0, 0, 10 * time.Second},
		{1000, 0, 0, 10 * time.Second},
		{1, 0.5, 0.5, 750 * time.Millisecond},
		{5, 1, 0.1, 9 * time.Second},
	} {
		o.jitter = tt.jitter
		if got := o.delay(tt.trips, tt.r); got != tt.want {
			t.Errorf("delay(%d, jitter %v, r %v) = %v, want %v", tt.trips, tt.jitter, tt.r, got, tt.want)
		}
	}
	// A max at the top of Duration's range: 2^62 ns doubled would wrap.
	o = options{base: 1 << 62, max: math.MaxInt64}
	if got := o.delay(2, 0); got != math.MaxInt64 {
		t.Errorf("delay of a doubled 2^62ns = %v, want the max", got)
	}
	// base·2^(trips-1) just under max is kept: 3·4 = 12 of a max of 13.
	o = options{base: 3, max: 13}
	if got := o.delay(3, 0); got != 12 {
		t.Errorf("delay(3) of base 3, max 13 = %v, want 12", got)
	}
}

var echo = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// The timer is armed while a Ready waits on an open breaker, and stopped
// once nobody waits: a breaker nobody waits on holds no timer.
func TestTimerOnlyWhileWaited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(echo, AnyError, WithJitter(0), WithOpenDelay(time.Second, time.Minute))
		b.Isolate()
		b.Reset()
		b.do(func() bool { return b.openLocked(b.trips + 1) })
		timerArmed := func() bool {
			b.mu.Lock()
			defer b.mu.Unlock()
			return b.timerFor != nil
		}
		if timerArmed() {
			t.Fatal("a timer is armed with nobody waiting")
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		for range 2 {
			go func() {
				_, err := b.Ready(ctx)
				done <- err
			}()
		}
		synctest.Wait()
		if !timerArmed() || b.waiters != 2 {
			t.Fatalf("timer armed %t for %d waiters, want armed for 2", timerArmed(), b.waiters)
		}
		cancel()
		<-done
		<-done
		if timerArmed() || b.waiters != 0 {
			t.Errorf("timer armed %t for %d waiters after both left, want neither", timerArmed(), b.waiters)
		}
		// A Ready that finds the delay over goes without a timer.
		time.Sleep(time.Second)
		p, err := b.Ready(t.Context())
		if err != nil || timerArmed() {
			t.Fatalf("Ready: %v, timer armed %t", err, timerArmed())
		}
		p.Release()
	})
}

// A wait that ends with its Ready admitted stops the timer too, when the
// Ready was the last waiter; the timer is reused across open periods.
func TestTimerStoppedWhenLastWaiterAdmitted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(echo, AnyError, WithJitter(0), WithOpenDelay(time.Second, time.Minute))
		b.do(func() bool { return b.openLocked(b.trips + 1) })
		done := make(chan struct{})
		go func() {
			p, _ := b.Ready(t.Context())
			p.Release()
			close(done)
		}()
		synctest.Wait()
		first := b.timer
		time.Sleep(time.Second)
		<-done
		b.mu.Lock()
		armed := b.timerFor != nil
		b.mu.Unlock()
		if armed {
			t.Error("timer still armed after the last waiter was admitted")
		}
		b.do(func() bool { b.cur.Load().probes = 1; return b.probeEndedLocked(b.cur.Load(), failed) })
		go func() {
			p, _ := b.Ready(t.Context())
			p.Release()
		}()
		synctest.Wait()
		if b.timer != first {
			t.Error("a new timer for the second open period, want the first one reset")
		}
		time.Sleep(2 * time.Second)
	})
}
