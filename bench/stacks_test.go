package bench

// The same stacks in this module, in failsafe-go and in go-kit, for
// compare.sh. Each benchmark is one request through the stack: readiness
// (where the library has it), the call, and the response, over a handler
// that answers at once. Names are Benchmark<Library>/<stack>, the stack
// named as in compare.sh's output; cmd/compare/report.go pairs each with the
// line of the Rust tower peer, towerrs/src/main.rs, that measures the same
// stack.
//
// Where a peer's stack differs from ours, it is configured to do no more
// work than ours; see README.md.

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/bulkhead"
	"github.com/failsafe-go/failsafe-go/ratelimiter"
	fstimeout "github.com/failsafe-go/failsafe-go/timeout"
	"github.com/go-kit/kit/endpoint"
	kitrate "github.com/go-kit/kit/ratelimit"
	"golang.org/x/time/rate"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/timeout"
)

// The parameters of every stack, the same in the Rust tower peer.
const (
	bigLimit    = 1 << 20 // ConcurrencyLimit(2^20): never full
	callTimeout = time.Second
	bufferBound = 1024
	callers     = 16 // buffer_16
)

// sink and sinkParallel keep results alive, so that no call can be
// optimised away.
var (
	sink         int
	sinkParallel atomic.Int64
)

func echo(_ context.Context, req int) (int, error) { return req, nil }

// serve runs b.N requests through svc, one after another.
func serve(b *testing.B, svc tower.Service[int, int]) {
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p, err := svc.Ready(ctx)
		if err != nil {
			b.Fatal(err)
		}
		res, err := p.Call(ctx, i)
		if err != nil {
			b.Fatal(err)
		}
		sink += res
	}
}

// serveParallel runs b.N requests through svc from n goroutines at once.
func serveParallel(b *testing.B, svc tower.Service[int, int], n int) {
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((n + procs - 1) / procs)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		local := 0
		for i := 0; pb.Next(); i++ {
			res, err := tower.Call(ctx, svc, i)
			if err != nil {
				panic(err)
			}
			local += res
		}
		sinkParallel.Add(int64(local))
	})
}

func BenchmarkTower(b *testing.B) {
	handler := tower.ServiceFunc[int, int](echo)
	b.Run("concurrency_limit", func(b *testing.B) {
		serve(b, limit.NewConcurrency(handler, bigLimit))
	})
	b.Run("timeout", func(b *testing.B) {
		serve(b, timeout.New(handler, callTimeout))
	})
	b.Run("timeout_concurrency_limit", func(b *testing.B) {
		serve(b, timeout.New[int, int](limit.NewConcurrency(handler, bigLimit), callTimeout))
	})
	b.Run("rate_limit", func(b *testing.B) {
		// tower-rs: RateLimit(u64::MAX per 1s), which never limits but
		// reads the clock on every call; MaxRate per second never limits
		// either.
		serve(b, limit.NewRate(handler, limit.MaxRate, time.Second))
	})
	b.Run("buffer_16", func(b *testing.B) {
		buf := buffer.New(handler, bufferBound)
		defer buf.Close()
		serveParallel(b, buf, callers)
	})
	b.Run("buffer_16_worker", func(b *testing.B) {
		// tower-rs: Buffer(1024) > ConcurrencyLimit(1), 16 tasks on 2
		// worker threads. Over a limit of 1, requests queue: tower's go
		// through its worker, and ours wait for their turn, which
		// buffer_16's always-ready handler lets them skip. The name is
		// the path of tower's it is measured against.
		buf := buffer.New[int, int](limit.NewConcurrency(handler, 1), bufferBound)
		defer buf.Close()
		serveParallel(b, buf, callers)
	})
}

// failsafeServe runs b.N executions of a constant function through exec.
// failsafe-go has no readiness phase, and Get does not hand the function a
// context: the least work failsafe-go can do per call.
func failsafeServe(b *testing.B, exec failsafe.Executor[int]) {
	b.ReportAllocs()
	fn := func() (int, error) { return 1, nil }
	for b.Loop() {
		res, err := exec.Get(fn)
		if err != nil {
			b.Fatal(err)
		}
		sink += res
	}
}

func BenchmarkFailsafe(b *testing.B) {
	b.Run("concurrency_limit", func(b *testing.B) {
		// A Bulkhead rejects when full rather than waiting; it never is here.
		failsafeServe(b, failsafe.With[int](bulkhead.New[int](bigLimit)))
	})
	b.Run("timeout", func(b *testing.B) {
		failsafeServe(b, failsafe.With[int](fstimeout.New[int](callTimeout)))
	})
	b.Run("timeout_concurrency_limit", func(b *testing.B) {
		// First listed is outermost, as in ours: Timeout(Bulkhead(fn)).
		failsafeServe(b, failsafe.With[int](fstimeout.New[int](callTimeout), bulkhead.New[int](bigLimit)))
	})
	b.Run("rate_limit", func(b *testing.B) {
		failsafeServe(b, failsafe.With[int](ratelimiter.NewBursty[int](1<<62, time.Second)))
	})
}

func BenchmarkGoKit(b *testing.B) {
	b.Run("rate_limit", func(b *testing.B) {
		// An erroring limiter over x/time/rate at an infinite rate: it
		// takes the limiter's lock and reads the clock, and never limits.
		var e endpoint.Endpoint = func(_ context.Context, req any) (any, error) { return req, nil }
		e = kitrate.NewErroringLimiter(rate.NewLimiter(rate.Inf, 1))(e)
		ctx := context.Background()
		var req any = 1 // a small int boxes without allocating
		b.ReportAllocs()
		for b.Loop() {
			res, err := e(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			sink += res.(int)
		}
	})
}
