package spawnready_test

import (
	"context"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/spawnready"
	"github.com/towergo/tower/towertest"
)

// echo answers at once with its request: the benchmarks measure
// SpawnReady's own cost per request (Ready + Call + response) over it.
var echo = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

// notNow is echo, except that it is never ready now: each Ready with a
// done ctx says no, so every request through SpawnReady takes a drive.
type notNow struct{}

func (notNow) Ready(ctx context.Context) (tower.Permit[int, int], error) {
	if ctx.Err() != nil {
		return tower.Permit[int, int]{}, ctx.Err()
	}
	return echo.Ready(ctx)
}

// The bare service, for comparison.
func BenchmarkEcho(b *testing.B) { towertest.Bench(b, echo, 1) }

// The inner service is ready now: the path of nearly every request.
func BenchmarkSpawnReady(b *testing.B) {
	s := spawnready.New[int, int](echo)
	defer s.Close()
	towertest.Bench(b, s, 1)
}

// Every request waits for a drive: a goroutine and a handoff each.
func BenchmarkSpawnReadyDrive(b *testing.B) {
	s := spawnready.New[int, int](notNow{})
	defer s.Close()
	towertest.Bench(b, s, 1)
}

func BenchmarkSpawnReadyParallel(b *testing.B) {
	s := spawnready.New[int, int](echo)
	defer s.Close()
	towertest.BenchParallel(b, s, 1)
}
