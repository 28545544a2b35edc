package timeout_test

import (
	"context"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/timeout"
)

// sink keeps the benchmarks' responses alive.
var sink int

// echo answers with its request at once.
var echo = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// benchmarkCall measures Ready, Call and the response through svc.
func benchmarkCall(b *testing.B, svc tower.Service[int, int]) {
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		p, err := svc.Ready(ctx)
		if err != nil {
			b.Fatal(err)
		}
		res, err := p.Call(ctx, 1)
		if err != nil {
			b.Fatal(err)
		}
		sink += res
	}
}

// BenchmarkBaseline is the ServiceFunc alone, for comparison.
func BenchmarkBaseline(b *testing.B) { benchmarkCall(b, echo) }

// BenchmarkTimeout is a Cooperative Timeout: it derives one context per
// call, and starts no goroutine.
func BenchmarkTimeout(b *testing.B) { benchmarkCall(b, timeout.New(echo, time.Second)) }

// BenchmarkTimeoutAbandon starts a goroutine per call.
func BenchmarkTimeoutAbandon(b *testing.B) {
	benchmarkCall(b, timeout.New(echo, time.Second, timeout.WithMode(timeout.Abandon)))
}

// BenchmarkTimeoutConcurrency is Timeout > ConcurrencyLimit, a limit never
// reached.
func BenchmarkTimeoutConcurrency(b *testing.B) {
	benchmarkCall(b, timeout.New(limit.NewConcurrency(echo, 1<<20), time.Second))
}
