package load_test

import (
	"context"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/load"
)

// sink keeps the benchmarks' results alive.
var (
	sink  int
	fsink float64
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

// intDone completes each request as it returns, through the Handle.
type intDone struct{}

func (intDone) Track(h *load.Handle, res int) int {
	h.Done()
	return res
}

func BenchmarkBaseline(b *testing.B) { benchmarkCall(b, echoInt) }

func BenchmarkConstant(b *testing.B) { benchmarkCall(b, load.NewConstant[int, int](echoInt, 1)) }

func BenchmarkPendingRequests(b *testing.B) {
	benchmarkCall(b, load.NewPendingRequests[int, int](echoInt))
}

// BenchmarkPendingRequestsWithCompletion allocates the request's Handle.
func BenchmarkPendingRequestsWithCompletion(b *testing.B) {
	benchmarkCall(b, load.NewPendingRequests[int, int](echoInt, load.WithCompletion[int](intDone{})))
}

func BenchmarkPeakEwma(b *testing.B) {
	benchmarkCall(b, load.NewPeakEwma[int, int](echoInt, 30*time.Millisecond, 10*time.Second))
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
