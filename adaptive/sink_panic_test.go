package adaptive_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// waitSink panics when Waiting moves by delta.
type waitSink struct{ delta int64 }

func (s waitSink) Add(k metrics.Kind, delta int64) {
	if k == metrics.Waiting && delta == s.delta {
		panic("sink exploded")
	}
}
func (waitSink) Observe(time.Duration, metrics.Outcome) {}

// A sink that panics as a wait begins or ends: the panic goes on up to
// the waiter, which holds nothing after it, not a place in the queue, not
// a permit. Left in the queue, the waiter would be handed the next permit
// that frees up, with nobody to use it, and under a limit of 1 every
// later caller would wait for good.
func TestPanickingSinkGivesEverythingBack(t *testing.T) {
	for _, tt := range []struct {
		name     string
		delta    int64         // the Add that panics
		deadline time.Duration // of the waiter's ctx
		end      time.Duration // when its wait ends
	}{
		{"WaitBegins", +1, time.Hour, 0},
		{"WaitEndsGranted", -1, time.Hour, 100 * time.Millisecond},
		{"WaitEndsCancelled", -1, 50 * time.Millisecond, 50 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l, h := mock(t, hold(), adaptive.WithBounds(1, 1), adaptive.WithMetrics(waitSink{tt.delta}))
				h.AllowAll()
				start := time.Now()
				first := towertest.MustReady(t, l)
				go func() {
					time.Sleep(100 * time.Millisecond)
					first.Release()
				}()
				ctx, cancel := context.WithTimeout(t.Context(), tt.deadline)
				defer cancel()
				r := towertest.Go(func() (v any, err error) {
					defer func() { v = recover() }()
					l.Ready(ctx)
					return nil, nil
				})
				if v, _ := r.Wait(); v != "sink exploded" {
					t.Fatalf("the waiter got panic %v, want the sink's", v)
				}
				if got := r.Since(start); got != tt.end {
					t.Errorf("the wait ended at %v, want %v", got, tt.end)
				}
				time.Sleep(time.Until(start.Add(100 * time.Millisecond)))
				synctest.Wait()
				if n, w := l.InFlight(), l.Waiting(); n != 0 || w != 0 {
					t.Fatalf("at 100ms: %d in flight, %d waiting; want none", n, w)
				}
				p, ok := towertest.ReadyNow(t, l)
				if !ok {
					t.Fatal("ReadyNow at 100ms: not ready, want the permit back")
				}
				p.Release()
			})
		})
	}
}
