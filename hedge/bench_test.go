package hedge_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/towertest"
)

// echoInt answers its request at once.
var echoInt = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// BenchmarkBaseline is the ServiceFunc alone, for comparison.
func BenchmarkBaseline(b *testing.B) { towertest.Bench(b, echoInt, 1) }

// BenchmarkHedgeLearning is a call that cannot be hedged yet: too few
// latencies recorded. The call deposits into the default budget, looks up
// the delay, and records its latency.
func BenchmarkHedgeLearning(b *testing.B) {
	towertest.Bench(b, hedge.New[int, int](echoInt, hedge.Idempotent[int]{}, 1<<62, 0.9, time.Minute), 1)
}

// BenchmarkHedgeArmed is a call whose hedge is armed for 1s and never
// sent, since the original answers at once: the cost every hedged request
// pays.
func BenchmarkHedgeArmed(b *testing.B) {
	towertest.Bench(b, hedge.MockLatencies(hedge.New[int, int](echoInt, hedge.Idempotent[int]{}, 1, 0.9, time.Minute), 1000), 1)
}

// BenchmarkHedgeArmedNoBudget is BenchmarkHedgeArmed without a budget.
func BenchmarkHedgeArmedNoBudget(b *testing.B) {
	towertest.Bench(b, hedge.MockLatencies(hedge.New[int, int](echoInt, hedge.Idempotent[int]{}, 1, 0.9, time.Minute, hedge.WithBudget(nil)), 1000), 1)
}

// BenchmarkHedgeArmedParallel shares one Hedge among GOMAXPROCS callers.
func BenchmarkHedgeArmedParallel(b *testing.B) {
	svc := hedge.MockLatencies(hedge.New[int, int](echoInt, hedge.Idempotent[int]{}, 1, 0.9, time.Minute), 1000)
	towertest.BenchParallel(b, svc, 1)
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
	towertest.Bench(b, hedge.New[int, int](slow, mark, 0, 0.9, time.Minute, hedge.WithBudget(nil)), 1)
}

// hedgeAs clones every request as n.
type hedgeAs int

func (h hedgeAs) Clone(int) (int, bool) { return int(h), true }
func (hedgeAs) CanRetry(int) bool       { return true }
