package reconnect_test

import (
	"context"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/reconnect"
	"github.com/towergo/tower/towertest"
)

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
	towertest.Bench(b, echo, 1)
}

// Connected: the path of every request once the service is made.
func BenchmarkReconnect(b *testing.B) {
	towertest.Bench(b, connected(b), 1)
}

func BenchmarkReconnectParallel(b *testing.B) {
	towertest.BenchParallel(b, connected(b), 1)
}
