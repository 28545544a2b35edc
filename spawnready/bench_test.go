package spawnready_test

import (
	"context"
	"sync"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/spawnready"
)

var sink int

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
func BenchmarkEcho(b *testing.B) { benchmark(b, echo) }

// The inner service is ready now: the path of nearly every request.
func BenchmarkSpawnReady(b *testing.B) {
	s := spawnready.New[int, int](echo)
	defer s.Close()
	benchmark(b, s)
}

// Every request waits for a drive: a goroutine and a handoff each.
func BenchmarkSpawnReadyDrive(b *testing.B) {
	s := spawnready.New[int, int](notNow{})
	defer s.Close()
	benchmark(b, s)
}

func BenchmarkSpawnReadyParallel(b *testing.B) {
	s := spawnready.New[int, int](echo)
	defer s.Close()
	b.ReportAllocs()
	var mu sync.Mutex
	b.RunParallel(func(pb *testing.PB) {
		n := 0
		for pb.Next() {
			res, err := tower.Call[int, int](context.Background(), s, 1)
			if err != nil {
				panic(err)
			}
			n += res
		}
		mu.Lock()
		sink += n
		mu.Unlock()
	})
}

func benchmark(b *testing.B, s tower.Service[int, int]) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p, err := s.Ready(ctx)
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
