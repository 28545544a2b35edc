package filter_test

import (
	"context"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/filter"
	"github.com/towergo/tower/towertest"
)

// BenchmarkFilter measures the overhead per request (Ready, Call, the
// response used) of a Filter whose predicate accepts everything, over a
// ServiceFunc that answers at once; "ServiceFunc" is that service alone.
func BenchmarkFilter(b *testing.B) {
	accept := func(req string) (string, error) { return req, nil }
	services := []struct {
		name string
		svc  tower.Service[string, string]
	}{
		{"ServiceFunc", echoSvc},
		{"New", filter.New(echoSvc, accept)},
		{"NewAsync", filter.NewAsync(echoSvc, func(_ context.Context, req string) (string, error) { return req, nil })},
	}
	for _, s := range services {
		b.Run(s.name, func(b *testing.B) { towertest.Bench(b, s.svc, "hello") })
	}
}
