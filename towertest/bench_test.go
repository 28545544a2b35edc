package towertest_test

import (
	"context"
	"errors"
	"flag"
	"sync/atomic"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towertest"
)

func echo(_ context.Context, req int) (int, error) { return req, nil }

func BenchmarkBenchServiceFunc(b *testing.B) {
	towertest.Bench(b, tower.Service[int, int](tower.ServiceFunc[int, int](echo)), 1)
}

func BenchmarkBenchParallelServiceFunc(b *testing.B) {
	towertest.BenchParallel(b, tower.Service[int, int](tower.ServiceFunc[int, int](echo)), 1)
}

// shortBenchtime makes testing.Benchmark, for the rest of t, run a
// benchmark for a few iterations instead of a second.
func shortBenchtime(t *testing.T) {
	f := flag.Lookup("test.benchtime")
	old := f.Value.String()
	if err := f.Value.Set("10x"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Value.Set(old) })
}

// Bench and BenchParallel send requests through the service, Ready then
// Call, as long as the benchmark runs; Bench fails the benchmark, which
// then reports no iterations, when Ready or Call fails.
func TestBench(t *testing.T) {
	shortBenchtime(t)
	var calls atomic.Int64
	counting := tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) {
		calls.Add(1)
		return req, nil
	})
	failing := tower.ServiceFunc[int, int](func(context.Context, int) (int, error) { return 0, errors.New("failed") })
	closed, h := towertest.NewMock[int, int]()
	h.Close()
	tests := []struct {
		name  string
		bench func(*testing.B)
		ok    bool
	}{
		{"Bench", func(b *testing.B) { towertest.Bench(b, tower.Service[int, int](counting), 1) }, true},
		{"BenchParallel", func(b *testing.B) { towertest.BenchParallel(b, tower.Service[int, int](counting), 1) }, true},
		{"BenchCallFails", func(b *testing.B) { towertest.Bench(b, tower.Service[int, int](failing), 1) }, false},
		{"BenchReadyFails", func(b *testing.B) { towertest.Bench(b, tower.Service[int, int](closed), 1) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls.Store(0)
			r := testing.Benchmark(tt.bench)
			if !tt.ok {
				if r.N != 0 {
					t.Errorf("the benchmark ran %d iterations, want it failed (0)", r.N)
				}
				return
			}
			if r.N == 0 || calls.Load() < int64(r.N) {
				t.Errorf("the benchmark ran %d iterations and made %d calls, want at least one call per iteration", r.N, calls.Load())
			}
		})
	}
}
