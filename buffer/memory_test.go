package buffer_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/towertest"
)

// An idle Buffer holds the same few KiB of heap whatever its
// bound; the queue takes memory only as requests are queued. The figure is
// logged (run with -v) and stated in the Buffer's doc. Before the fix, a
// Buffer(1<<20) held 32 MiB from New on, and New with the largest bound
// asked for 128 GiB.
func TestIdleBufferMemory(t *testing.T) {
	const n = 20
	echo := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) { return req, nil })
	for _, bound := range []int{1, 1 << 20, maxBound} {
		t.Run(fmt.Sprint(bound), func(t *testing.T) {
			bufs := make([]*buffer.Buffer[string, string], n)
			h0, _ := heapAndStack()
			for i := range bufs {
				bufs[i] = buffer.New[string, string](echo, bound)
			}
			h1, _ := heapAndStack()
			runtime.KeepAlive(bufs)
			per := (h1 - h0) / n
			t.Logf("an idle Buffer(%d) holds %d B of heap", bound, per)
			if per > 4<<10 {
				t.Errorf("an idle Buffer(%d) holds %d B of heap, want at most 4 KiB", bound, per)
			}
			for _, b := range bufs {
				b.Close()
			}
		})
	}
}

// The queue's ring follows what is queued: it grows to hold 1000 queued
// requests in a Buffer of bound 1<<20, and shrinks back as the worker
// drains it.
func TestQueueMemoryFollowsUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[string, string]()
		h.Allow(0)
		b := buffer.New[string, string](m, 1<<20)
		defer b.Close()
		if size := buffer.RingSize(b); size != 0 {
			t.Errorf("a new Buffer holds a ring of %d, want none", size)
		}
		const queued = 1000
		var wg sync.WaitGroup
		for range queued + 1 { // one more, in the worker's hand
			wg.Go(func() {
				if _, err := tower.Call(t.Context(), svc(b), "hello"); err != nil {
					t.Errorf("Call: %v", err)
				}
			})
		}
		synctest.Wait()
		if size := buffer.RingSize(b); size < queued || size > 2*queued {
			t.Errorf("%d requests queued in a ring of %d, want between %d and %d", queued, size, queued, 2*queued)
		}
		h.AllowAll()
		go func() {
			for range queued + 1 {
				r, err := h.Next(t.Context())
				if err != nil {
					return
				}
				r.Respond("world")
			}
		}()
		wg.Wait()
		if size := buffer.RingSize(b); size > buffer.MinRing {
			t.Errorf("a drained queue holds a ring of %d, want at most %d", size, buffer.MinRing)
		}
	})
}
