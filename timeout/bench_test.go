package timeout_test

import (
	"context"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towertest"
)

// echo answers with its request at once.
var echo = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// BenchmarkBaseline is the ServiceFunc alone, for comparison.
func BenchmarkBaseline(b *testing.B) { towertest.Bench(b, echo, 1) }

// BenchmarkTimeout is a Cooperative Timeout: it derives one context per
// call, and starts no goroutine.
func BenchmarkTimeout(b *testing.B) { towertest.Bench(b, timeout.New(echo, time.Second), 1) }

// BenchmarkTimeoutAbandon starts a goroutine per call.
func BenchmarkTimeoutAbandon(b *testing.B) {
	towertest.Bench(b, timeout.New(echo, time.Second, timeout.WithMode(timeout.Abandon)), 1)
}

// BenchmarkTimeoutConcurrency is Timeout > ConcurrencyLimit, a limit never
// reached.
func BenchmarkTimeoutConcurrency(b *testing.B) {
	towertest.Bench(b, timeout.New(limit.NewConcurrency(echo, 1<<20), time.Second), 1)
}

// BenchmarkTimeoutUnderCallerDeadline is a Timeout whose caller has a
// deadline of its own, later than the Timeout's, as a server's request
// context often has: the deadlines are compared on the monotonic clock
// without a third reading of it.
func BenchmarkTimeoutUnderCallerDeadline(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	svc := timeout.New(echo, time.Second)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tower.Call(ctx, svc, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTimeoutNested is Timeout(1s) > Timeout(2s): the inner one reads
// the outer one's deadline, which carries a monotonic reading, and so
// compares the two without reading the clock a third time.
func BenchmarkTimeoutNested(b *testing.B) {
	towertest.Bench(b, timeout.New(timeout.New(echo, 2*time.Second), time.Second), 1)
}
