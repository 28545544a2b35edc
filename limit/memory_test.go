package limit_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towertest"
)

// parked measures the memory held by n goroutines while each is parked in
// wait, which must block until ctx ends: the heap and stack bytes in use
// with them parked, less those in use before they started.
func parked(n int, wait func(ctx context.Context)) (heap, stack int64) {
	ctx, cancel := context.WithCancel(context.Background())
	var before, during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { wait(ctx) })
	}
	synctest.Wait()
	runtime.GC()
	runtime.ReadMemStats(&during)
	cancel()
	wg.Wait()
	return int64(during.HeapAlloc) - int64(before.HeapAlloc),
		int64(during.StackInuse) - int64(before.StackInuse)
}

// TestConcurrencyWaiterMemory measures what a request waiting for a permit
// in Ready holds, over what a goroutine parked on a channel holds anyway.
func TestConcurrencyWaiterMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("measures memory with thousands of goroutines")
	}
	synctest.Test(t, func(t *testing.T) {
		const n = 4000
		cl := limit.NewConcurrency[string, string](echo, 1)
		p := towertest.MustReady(t, cl)
		defer p.Release()

		onChannel := func(ctx context.Context) { <-ctx.Done() }
		inReady := func(ctx context.Context) {
			if _, err := cl.Ready(ctx); err != context.Canceled {
				panic(err)
			}
		}
		parked(n, onChannel) // warm up: goroutines, stacks, the sema's lock
		baseHeap, baseStack := parked(n, onChannel)
		heap, stack := parked(n, inReady)
		perHeap := float64(heap-baseHeap) / n
		perStack := float64(stack-baseStack) / n
		t.Logf("per waiter in Ready, over a goroutine parked on a channel: %.0f heap bytes, %.0f stack bytes", perHeap, perStack)
		t.Logf("a goroutine parked on a channel: %.0f heap bytes, %.0f stack bytes", float64(baseHeap)/n, float64(baseStack)/n)
		// A waiter is a waitq.Waiter and its channel (80 and 112 bytes),
		// and its select on two channels parks on one more runtime sudog
		// than a receive does: about 300 bytes on linux/amd64 with Go 1.26.
		if perHeap > 320 {
			t.Errorf("got %.0f heap bytes per waiter, want at most 320", perHeap)
		}
		// Stack is counted in whole stacks, and on a loaded machine a few
		// of the thousands may be caught growing or shrinking: allow for
		// that, not for a bigger stack per waiter, which would show as a
		// whole stack more.
		if limit := float64(baseStack) / n / 2; perStack > limit {
			t.Errorf("got %.0f more stack bytes per waiter than a parked goroutine, want about 0 (at most %.0f)", perStack, limit)
		}
	})
}
