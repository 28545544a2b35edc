package breaker_test

import (
	"testing"
	"time"

	"github.com/towergo/tower/breaker"
	"github.com/towergo/tower/towertest"
)

// BenchmarkBaseline is the bare ServiceFunc, for comparison.
func BenchmarkBaseline(b *testing.B) { towertest.Bench(b, backend, ok) }

// BenchmarkConsecutive is a closed breaker counting failures in a row, a
// request that succeeds: atomics, no lock.
func BenchmarkConsecutive(b *testing.B) {
	towertest.Bench(b, breaker.New(backend, breaker.AnyError), ok)
}

// BenchmarkRatioCalls is a closed breaker with a LastCalls window: a short
// lock per call.
func BenchmarkRatioCalls(b *testing.B) {
	towertest.Bench(b, breaker.New(backend, breaker.AnyError, breaker.WithFailureRatio(0.5, 100, breaker.LastCalls(100))), ok)
}

// BenchmarkRatioDuration is a closed breaker with a LastDuration window:
// a short lock and a clock reading per call.
func BenchmarkRatioDuration(b *testing.B) {
	towertest.Bench(b, breaker.New(backend, breaker.AnyError, breaker.WithFailureRatio(0.1, 100, breaker.LastDuration(30*time.Second))), ok)
}

// The same from GOMAXPROCS goroutines: run with -cpu 1,2,4.
func BenchmarkBaselineParallel(b *testing.B) { towertest.BenchParallel(b, backend, ok) }

func BenchmarkConsecutiveParallel(b *testing.B) {
	towertest.BenchParallel(b, breaker.New(backend, breaker.AnyError), ok)
}

func BenchmarkRatioDurationParallel(b *testing.B) {
	towertest.BenchParallel(b, breaker.New(backend, breaker.AnyError, breaker.WithFailureRatio(0.1, 100, breaker.LastDuration(30*time.Second))), ok)
}

// A closed breaker allocates nothing per request, on success or failure,
// in either mode, once its pool is warm.
func TestHotPathAllocatesNothing(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []breaker.Option
		req  int
	}{
		{"Consecutive/ok", nil, ok},
		{"Consecutive/bad", []breaker.Option{breaker.WithConsecutiveFailures(1 << 30)}, bad},
		{"Calls/ok", []breaker.Option{breaker.WithFailureRatio(0.5, 10, breaker.LastCalls(10))}, ok},
		{"Duration/ok", []breaker.Option{breaker.WithFailureRatio(0.5, 10, breaker.LastDuration(time.Minute))}, ok},
	} {
		svc := breaker.New(backend, breaker.AnyError, tt.opts...)
		ctx := t.Context()
		if n := testing.AllocsPerRun(1000, func() {
			p, _ := svc.Ready(ctx)
			p.Call(ctx, tt.req)
		}); n != 0 {
			t.Errorf("%s: %v allocations per request, want 0", tt.name, n)
		}
	}
}
