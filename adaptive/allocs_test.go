package adaptive_test

import (
	"context"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
)

// raceEnabled is set by race_test.go when the race detector is on.
var raceEnabled bool

// A permit that is free costs no allocation, Ready and Call together, with
// or without a priority and a sink, and under a LoadShed, which probes with
// the request's priority: its record comes from a pool.
func TestUncontendedPermitDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	for _, tt := range []struct {
		name string
		ctx  context.Context
		opts []adaptive.Option
		shed bool // under a LoadShed
	}{
		{"normal", context.Background(), nil, false},
		{"critical", tower.WithPriority(context.Background(), tower.PriorityCritical), nil, false},
		{"metrics", context.Background(), []adaptive.Option{adaptive.WithMetrics(new(metrics.Counts))}, false},
		{"LoadShed/low", tower.WithPriority(context.Background(), tower.PriorityLow), nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc := tower.Service[int, int](unreached(tt.opts...))
			if tt.shed {
				svc = loadshed.New(svc)
			}
			if n := testing.AllocsPerRun(1000, func() {
				if _, err := tower.Call(tt.ctx, svc, 1); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("a request allocates %v times, want 0", n)
			}
		})
	}
}
