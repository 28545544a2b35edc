package hedge_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/hedge"
)

// sink and psink keep the benchmarks' results alive.
var (
	sink  int
	psink atomic.Int64
)

// echoInt answers its request at once.
var echoInt = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// benchmarkCall measures Ready, Call and the response through svc.
func benchmarkCall(b *testing.B, svc tower.Service[int, int]) {
	ctx := b.Context()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		p, err := svc.Ready(ctx)
		if err != nil {
			b.Fatal(err)
		}
		res, err := p.Call(ctx, 1)
		if err != nil {
			b.Fatal(err)
		}
		n += res
	}
	sink += n
}

// BenchmarkBaseline is the ServiceFunc alone, for comparison.
func BenchmarkBaseline(b *testing.B) { benchmarkCall(b, echoInt) }

// BenchmarkHedgeLearning is a call that cannot be hedged yet: too few
// latencies recorded. The call deposits into the default budget, looks up
// the delay, and records its latency.
func BenchmarkHedgeLearning(b *testing.B) {
	benchmarkCall(b, hedge.New[int, int](echoInt, hedge.Idempotent[int]{}, 1<<62, 0.9, time.Minute))
}

// BenchmarkHedgeArmed is a call whose hedge is armed for 1s and never
// sent, since the original answers at once: the cost every hedged request
// pays.
func BenchmarkHedgeArmed(b *testing.B) {
	benchmarkCall(b, hedge.New[int, int](echoInt, hedge.Idempotent[int]{}, 1, 0.9, time.Minute,
		hedge.WithMockLatencies(1000)))
}

// BenchmarkHedgeArmedNoBudget is BenchmarkHedgeArmed without a budget.
func BenchmarkHedgeArmedNoBudget(b *testing.B) {
	benchmarkCall(b, hedge.New[int, int](echoInt, hedge.Idempotent[int]{}, 1, 0.9, time.Minute,
		hedge.WithMockLatencies(1000), hedge.WithBudget(nil)))
}

// BenchmarkHedgeArmedParallel shares one Hedge among GOMAXPROCS callers.
func BenchmarkHedgeArmedParallel(b *testing.B) {
	svc := hedge.New[int, int](echoInt, hedge.Idempotent[int]{}, 1, 0.9, time.Minute, hedge.WithMockLatencies(1000))
	ctx := b.Context()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		n := 0
		for pb.Next() {
			p, err := svc.Ready(ctx)
			if err != nil {
				panic(err)
			}
			res, err := p.Call(ctx, 1)
			if err != nil {
				panic(err)
			}
			n += res
		}
		psink.Add(int64(n))
	})
}

// BenchmarkHedgeSent is a call whose original never answers on its own:
// the hedge goes out at once (delay 0), wins, and the original is
// cancelled. It is the cost of the hedge's goroutine and its round trip.
func BenchmarkHedgeSent(b *testing.B) {
	var calls atomic.Int64
	slow := tower.ServiceFunc[int, int](func(ctx context.Context, req int) (int, error) {
		if req == 1 { // the original
			<-ctx.Done()
			return 0, ctx.Err()
		}
		calls.Add(1)
		return req, nil
	})
	mark := hedgeAs(2)
	benchmarkCallReq(b, hedge.New[int, int](slow, mark, 0, 0.9, time.Minute, hedge.WithBudget(nil)), 1)
}

// hedgeAs clones every request as n.
type hedgeAs int

func (h hedgeAs) Clone(int) (int, bool) { return int(h), true }
func (hedgeAs) CanRetry(int) bool       { return true }

func benchmarkCallReq(b *testing.B, svc tower.Service[int, int], req int) {
	ctx := b.Context()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		res, err := tower.Call(ctx, svc, req)
		if err != nil {
			b.Fatal(err)
		}
		n += res
	}
	sink += n
}
