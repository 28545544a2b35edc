package reconnect_test

import (
	"context"
	"sync"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/reconnect"
)

var sink int

// echo answers at once with its request: the benchmarks measure
// Reconnect's own cost per request (Ready + Call + response) over it.
var echo = tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })

var dialEcho = reconnect.MakeFunc[string, int, int](func(context.Context, string) (tower.Service[int, int], error) {
	return echo, nil
})

func connected(b *testing.B) *reconnect.Reconnect[string, int, int] {
	r := reconnect.New(dialEcho, "echo")
	if _, err := tower.Call[int, int](b.Context(), r, 0); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	return r
}

// The bare service, for comparison.
func BenchmarkEcho(b *testing.B) {
	benchmark(b, echo)
}

// Connected: the path of every request once the service is made.
func BenchmarkReconnect(b *testing.B) {
	benchmark(b, connected(b))
}

func BenchmarkReconnectParallel(b *testing.B) {
	r := connected(b)
	b.ReportAllocs()
	var mu sync.Mutex
	b.RunParallel(func(pb *testing.PB) {
		n := 0
		for pb.Next() {
			res, err := tower.Call[int, int](context.Background(), r, 1)
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
