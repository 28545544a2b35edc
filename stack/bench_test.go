package stack_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towertest"
)

// A Builder only calls the constructors: the stack it builds is the one
// built by hand, and costs the same per request. Each pair below builds
// one stack both ways, over a service that answers at once.
var pairs = []struct {
	name          string
	builder, hand func() tower.Service[string, string]
}{
	{
		"Timeout>Retry>ConcurrencyLimit>RateLimit",
		func() tower.Service[string, string] {
			return stack.New[string, string]().
				Timeout(time.Second).
				Retry(retry.AnyError).
				ConcurrencyLimit(10).
				RateLimit(limit.MaxRate, time.Second).
				ServiceFunc(echo)
		},
		func() tower.Service[string, string] {
			return stack.New[string, string]().
				Layer(timeout.NewLayer[string, string](time.Second)).
				Layer(retry.NewLayer(retry.NewPolicy[string, string](retry.AnyError))).
				Layer(limit.NewConcurrencyLayer[string, string](10)).
				Layer(limit.NewRateLayer[string, string](limit.MaxRate, time.Second)).
				Service(tower.ServiceFunc[string, string](echo))
		},
	},
	{
		"LoadShed>Timeout>ConcurrencyLimit",
		func() tower.Service[string, string] {
			return stack.New[string, string]().LoadShed().Timeout(time.Second).ConcurrencyLimit(10).ServiceFunc(echo)
		},
		func() tower.Service[string, string] {
			return loadshed.New(timeout.New(limit.NewConcurrency(tower.Service[string, string](tower.ServiceFunc[string, string](echo)), 10), time.Second))
		},
	},
}

// BenchmarkStack measures each pair: the two lines of a pair should read
// the same, in ns/op and in allocs/op.
func BenchmarkStack(b *testing.B) {
	for _, p := range pairs {
		b.Run(p.name+"/Builder", func(b *testing.B) { towertest.Bench(b, p.builder(), "hello") })
		b.Run(p.name+"/ByHand", func(b *testing.B) { towertest.Bench(b, p.hand(), "hello") })
	}
}

// What the benchmark shows, held as a test: each pair builds services of
// the same type that allocate the same per request.
func TestBuilderCostsWhatByHandCosts(t *testing.T) {
	ctx := context.Background()
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			built, hand := p.builder(), p.hand()
			if fmt.Sprintf("%T", built) != fmt.Sprintf("%T", hand) {
				t.Errorf("the builder built a %T, by hand a %T", built, hand)
			}
			perRequest := func(svc tower.Service[string, string]) float64 {
				return towertest.AllocsPerRun(100, func() {
					if _, err := tower.Call(ctx, svc, "hello"); err != nil {
						t.Fatal(err)
					}
				})
			}
			if b, h := perRequest(built), perRequest(hand); b != h {
				t.Errorf("a request allocates %v through the builder's stack, %v through the one by hand", b, h)
			}
		})
	}
}
