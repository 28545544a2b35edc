package buffer_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

var sink int

// echo answers at once with its request: the benchmarks measure the
// Buffer's own cost per request (Ready + Call + response) over it.
var echo = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// One caller, one request at a time: nothing is ever queued, so every
// request skips the queue.
func BenchmarkBuffer1(b *testing.B) {
	buf := buffer.New[int, int](echo, 1024)
	defer buf.Close()
	towertest.Bench(b, buf, 1)
}

// 16 concurrent callers share one Buffer; ns/op is per request, over all
// callers.
func BenchmarkBuffer16(b *testing.B) {
	benchmarkQueued(b, echo)
}

// One caller per GOMAXPROCS; run with -cpu 1,2.
func BenchmarkBufferParallel(b *testing.B) {
	buf := buffer.New[int, int](echo, 1024)
	defer buf.Close()
	towertest.BenchParallel(b, buf, 1)
}

// heapAndStack returns the bytes in use on the heap and on goroutine stacks
// once garbage, and anything in sync.Pools, has been collected.
func heapAndStack() (heap, stack int64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc), int64(ms.StackInuse)
}

// parked returns the heap and stack bytes held per goroutine while n
// goroutines run park and block in it.
func parked(n int, park func()) (heap, stack int64) {
	h0, s0 := heapAndStack()
	for range n {
		go park()
	}
	synctest.Wait()
	h1, s1 := heapAndStack()
	return (h1 - h0) / int64(n), (s1 - s0) / int64(n)
}

// The memory a request holds while it is queued in a Buffer: its callers
// are parked in Call while the inner service is not ready. The baseline is
// the same number of goroutines parked on a channel, so the figure is what
// the Buffer adds to the caller's own goroutine. The figure is logged (run
// with -v) and stated in the Buffer's doc.
func TestQueuedRequestMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 2000
		// The baseline goroutines stay parked until the end, so that both
		// rounds start new goroutines rather than reuse exited ones.
		block := make(chan struct{})
		defer close(block)
		baseHeap, baseStack := parked(n, func() { <-block })

		m, h := towertest.NewMock[int, int]()
		h.Allow(0)
		buf := buffer.New[int, int](m, n)
		defer buf.Close()
		heap, stack := parked(n, func() {
			p, err := buf.Ready(context.Background())
			if err != nil {
				panic(err)
			}
			p.Call(context.Background(), 1)
		})
		t.Logf("per queued request: %d B heap (the Buffer's), %d B of stack (the caller's goroutine; a goroutine parked on a channel holds %d B of heap and %d B of stack)",
			heap-baseHeap, stack, baseHeap, baseStack)
		if got := heap - baseHeap; got > 512 {
			t.Errorf("a queued request holds %d B of heap, want at most 512", got)
		}
	})
}

// BenchmarkBuffer1Metrics is BenchmarkBuffer1 reporting to a
// metrics.Counts. Its requests skip the queue, as the inner service is
// always ready, and report nothing.
func BenchmarkBuffer1Metrics(b *testing.B) {
	buf := buffer.New(echo, 1024, buffer.WithMetrics(new(metrics.Counts)))
	defer buf.Close()
	towertest.Bench(b, buf, 1)
}

// BenchmarkBuffer16Metrics is BenchmarkBuffer16 reporting to a
// metrics.Counts.
func BenchmarkBuffer16Metrics(b *testing.B) {
	benchmarkQueued(b, echo, buffer.WithMetrics(new(metrics.Counts)))
}

// BenchmarkBufferQueued16 is 16 callers of a Buffer over a
// ConcurrencyLimit(1): most requests queue and wait for their turn.
func BenchmarkBufferQueued16(b *testing.B) {
	benchmarkQueued(b, limit.NewConcurrency(echo, 1))
}

// BenchmarkBufferQueued16Metrics is BenchmarkBufferQueued16 reporting to
// a metrics.Counts: Queued and Waiting on most requests.
func BenchmarkBufferQueued16Metrics(b *testing.B) {
	benchmarkQueued(b, limit.NewConcurrency(echo, 1), buffer.WithMetrics(new(metrics.Counts)))
}

// BenchmarkBufferQueued16Cancellable is BenchmarkBufferQueued16 with a
// context that can end, as a server's request context can: a request that
// waits for the inner service in its turn waits under a context derived
// from it, which Close can end too.
func BenchmarkBufferQueued16Cancellable(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	benchmarkQueuedCtx(b, ctx, limit.NewConcurrency(echo, 1))
}

// benchmarkQueued is 16 callers of a Buffer over inner; ns/op is per
// request, over all callers.
func benchmarkQueued(b *testing.B, inner tower.Service[int, int], opts ...buffer.Option) {
	benchmarkQueuedCtx(b, context.Background(), inner, opts...)
}

// benchmarkQueuedCtx is benchmarkQueued with every call under ctx.
func benchmarkQueuedCtx(b *testing.B, ctx context.Context, inner tower.Service[int, int], opts ...buffer.Option) {
	buf := buffer.New(inner, 1024, opts...)
	defer buf.Close()
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((16 + procs - 1) / procs)
	b.ReportAllocs()
	var mu sync.Mutex
	b.RunParallel(func(pb *testing.PB) {
		n := 0
		for pb.Next() {
			res, err := tower.Call[int, int](ctx, buf, 1)
			if err != nil {
				panic(err)
			}
			n += res
		}
		mu.Lock()
		sink += n
		mu.Unlock()
	})
}
