package load_test

import (
	"context"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/towertest"
)

// fsink keeps the benchmarks' results alive.
var fsink float64

// echoInt answers its request at once.
var echoInt = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// intDone completes each request as it returns, through the Handle.
type intDone struct{}

func (intDone) Track(h *load.Handle, res int) int {
	h.Done()
	return res
}

func BenchmarkBaseline(b *testing.B) { towertest.Bench(b, echoInt, 1) }

func BenchmarkConstant(b *testing.B) { towertest.Bench(b, load.NewConstant[int, int](echoInt, 1), 1) }

func BenchmarkPendingRequests(b *testing.B) {
	towertest.Bench(b, load.NewPendingRequests[int, int](echoInt), 1)
}

// BenchmarkPendingRequestsWithCompletion allocates the request's Handle.
func BenchmarkPendingRequestsWithCompletion(b *testing.B) {
	towertest.Bench(b, load.NewPendingRequests[int, int](echoInt, load.WithCompletion[int](intDone{})), 1)
}

func BenchmarkPeakEwma(b *testing.B) {
	towertest.Bench(b, load.NewPeakEwma[int, int](echoInt, 30*time.Millisecond, 10*time.Second), 1)
}

// BenchmarkPeakEwmaLoad is one read of the load, as a balancer does twice
// per pick.
func BenchmarkPeakEwmaLoad(b *testing.B) {
	svc := load.NewPeakEwma[int, int](echoInt, 30*time.Millisecond, 10*time.Second)
	b.ReportAllocs()
	f := 0.0
	for b.Loop() {
		f += svc.Load()
	}
	fsink += f
}
