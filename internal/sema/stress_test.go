package sema

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestStress has many goroutines take and give back units, some giving up
// as their contexts are cancelled from another goroutine. At no point may
// more units be held than the Sema has, and at the end all are back.
func TestStress(t *testing.T) {
	const (
		units   = 3
		workers = 16
		rounds  = 2000
	)
	s := New(units)
	var held, maxHeld, granted, gaveUp atomic.Int64
	cancels := make(chan context.CancelFunc, workers)
	stop := make(chan struct{})
	var canceller sync.WaitGroup
	canceller.Go(func() {
		for {
			select {
			case c := <-cancels:
				c()
			case <-stop:
				return
			}
		}
	})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				ctx, cancel := context.WithCancel(context.Background())
				if (w+i)%3 == 0 {
					cancels <- cancel // cancelled at some point, maybe mid-wait
				}
				var err error
				if i%5 == 0 {
					if !s.TryAcquire() {
						err = context.Canceled
					}
				} else {
					err = s.Acquire(ctx)
				}
				cancel()
				if err != nil {
					if err != context.Canceled {
						t.Errorf("Acquire: got %v, want nil or %v", err, context.Canceled)
					}
					gaveUp.Add(1)
					continue
				}
				n := held.Add(1)
				for m := maxHeld.Load(); n > m && !maxHeld.CompareAndSwap(m, n); m = maxHeld.Load() {
				}
				runtime.Gosched()
				held.Add(-1)
				granted.Add(1)
				s.Release()
			}
		})
	}
	wg.Wait()
	close(stop)
	canceller.Wait()
	if m := maxHeld.Load(); m > units {
		t.Errorf("got up to %d units held at once, want at most %d", m, units)
	}
	if got := granted.Load() + gaveUp.Load(); got != workers*rounds {
		t.Errorf("got %d outcomes, want %d", got, workers*rounds)
	}
	checkCounts(t, s, units, 0)
	t.Logf("granted %d, gave up %d, max held %d", granted.Load(), gaveUp.Load(), maxHeld.Load())
}
