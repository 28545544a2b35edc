package steer_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/steer"
)

// sink keeps the benchmarks' results alive.
var sink int

// BenchmarkSteer measures the overhead per request (Ready, Call, the
// response used) of a Steer over two services that answer at once, routed
// by the request; "ServiceFunc" is one such service alone.
func BenchmarkSteer(b *testing.B) {
	echo := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) { return req, nil })
	services := []struct {
		name string
		svc  svc
	}{
		{"ServiceFunc", echo},
		{"Steer", steer.New([]svc{echo, echo}, byName)},
	}
	for _, s := range services {
		b.Run(s.name, func(b *testing.B) {
			ctx := b.Context()
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				p, err := s.svc.Ready(ctx)
				if err != nil {
					b.Fatal(err)
				}
				res, err := p.Call(ctx, "bob")
				if err != nil {
					b.Fatal(err)
				}
				n += len(res)
			}
			sink += n
		})
	}
}

// BenchmarkSteerParallel shares one Steer among GOMAXPROCS callers.
func BenchmarkSteerParallel(b *testing.B) {
	echo := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) { return req, nil })
	s := steer.New([]svc{echo, echo}, byName)
	ctx := b.Context()
	b.ReportAllocs()
	var total atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		n := 0
		for pb.Next() {
			p, err := s.Ready(ctx)
			if err != nil {
				panic(err)
			}
			res, err := p.Call(ctx, "ada")
			if err != nil {
				panic(err)
			}
			n += len(res)
		}
		total.Add(int64(n))
	})
	sink += int(total.Load())
}
