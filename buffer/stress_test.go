package buffer_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
)

// oneWaiter fails the test if two goroutines wait in its Ready at once:
// a Buffer asks its inner service for readiness on behalf of one request
// at a time. A Ready with a done ctx, a "ready now?" question, does not
// wait, and is not counted.
type oneWaiter struct {
	svc
	t       *testing.T
	waiting atomic.Int32
}

func (o *oneWaiter) Ready(ctx context.Context) (permit, error) {
	if ctx.Err() != nil {
		return o.svc.Ready(ctx)
	}
	if n := o.waiting.Add(1); n > 1 {
		o.t.Errorf("%d requests wait in the inner service's Ready at once", n)
	}
	defer o.waiting.Add(-1)
	return o.svc.Ready(ctx)
}

// Many callers on the real clock, some giving up at random moments, through
// Buffer(4) > ConcurrencyLimit(2) over a handler that takes a moment: every
// call returns once, with the answer or its ctx's error; one request at a
// time waits in the inner service's Ready; and every slot and permit is
// back at the end.
func TestStressTurns(t *testing.T) {
	handler := tower.ServiceFunc[string, string](func(ctx context.Context, req string) (string, error) {
		time.Sleep(time.Duration(rand.IntN(50)) * time.Microsecond)
		return req, nil
	})
	lim := limit.NewConcurrency[string, string](handler, 2)
	inner := &oneWaiter{svc: lim, t: t}
	b := buffer.New[string, string](inner, 4)
	defer b.Close()

	const callers, each = 16, 200
	var served, gaveUp atomic.Int64
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range each {
				ctx, cancel := context.WithTimeout(t.Context(), time.Duration(rand.IntN(2000))*time.Microsecond)
				res, err := tower.Call(ctx, svc(b), "x")
				cancel()
				switch {
				case err == nil && res == "x":
					served.Add(1)
				case err == context.DeadlineExceeded || err == context.Canceled:
					gaveUp.Add(1)
				default:
					t.Errorf("got %q, %v", res, err)
				}
			}
		})
	}
	wg.Wait()
	if n := served.Load() + gaveUp.Load(); n != callers*each {
		t.Errorf("%d calls returned, want %d", n, callers*each)
	}
	t.Logf("%d served, %d gave up", served.Load(), gaveUp.Load())
	if n := buffer.SlotsFree(b); n != 4 {
		t.Errorf("%d of 4 slots free, want all", n)
	}
	for range 2 {
		p, ok, err := tower.ReadyNow[string, string](lim)
		if !ok || err != nil {
			t.Fatalf("the limit of 2 is not ready twice now (%v): a permit leaked", err)
		}
		defer p.Release()
	}
}
