package steer_test

import (
	"context"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/steer"
	"github.com/towergo/tower/towertest"
)

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
		b.Run(s.name, func(b *testing.B) { towertest.Bench(b, s.svc, "bob") })
	}
}

// BenchmarkSteerParallel shares one Steer among GOMAXPROCS callers.
func BenchmarkSteerParallel(b *testing.B) {
	echo := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) { return req, nil })
	towertest.BenchParallel(b, steer.New([]svc{echo, echo}, byName), "ada")
}
