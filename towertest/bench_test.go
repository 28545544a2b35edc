package towertest_test

import (
	"context"
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
