package metrics_test

import (
	"context"
	"fmt"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/stack"
)

// A stack with one sink per layer: the metrics layer outermost sees every
// call the stack answers, the LoadShed counts what it turns away, and the
// limit counts what it lets in.
func Example() {
	var calls, shed, limited metrics.Counts
	echo := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		return req, nil
	})
	svc := stack.New[string, string]().
		Layer(metrics.NewLayer[string, string](&calls)).                                  // outermost
		Layer(loadshed.NewLayer[string, string](loadshed.WithMetrics(&shed))).            // LoadShed > ConcurrencyLimit(1)
		Layer(limit.NewConcurrencyLayer[string, string](1, limit.WithMetrics(&limited))). // innermost
		Service(echo)

	ctx := context.Background()
	held, _ := svc.Ready(ctx) // takes the limit's only permit
	_, err := tower.Call(ctx, svc, "b")
	fmt.Println("b:", err)
	fmt.Println("in flight:", calls.Get(metrics.InFlight), limited.Get(metrics.InFlight))
	held.Call(ctx, "a")
	fmt.Println("shed:", shed.Snapshot())
	fmt.Println("limit:", limited.Snapshot())
	s := calls.Snapshot() // latencies depend on the machine
	fmt.Println("served:", s.Calls[metrics.OutcomeServed], "shed:", s.Calls[metrics.OutcomeShed])
	// Output:
	// b: service overloaded
	// in flight: 1 1
	// shed: Shed=1
	// limit: {}
	// served: 1 shed: 1
}

// Counts keeps totals, the calls by outcome, and the served calls'
// latencies: their sum and maximum. A shed call's latency is not among
// them.
func ExampleCounts() {
	var c metrics.Counts
	c.Add(metrics.InFlight, 1)
	c.Add(metrics.Retried, 1)
	c.Add(metrics.Retried, 1)
	c.Observe(120*time.Millisecond, metrics.OutcomeServed)
	c.Observe(80*time.Millisecond, metrics.OutcomeServed)
	c.Observe(time.Microsecond, metrics.OutcomeShed)
	fmt.Println(c.Snapshot())
	s := c.Snapshot()
	fmt.Println("mean served:", s.Latency/time.Duration(s.Served()))
	// Output:
	// InFlight=1 Retried=2 Calls[served]=2 Calls[shed]=1 Latency=200ms MaxLatency=120ms
	// mean served: 100ms
}

// A Sink of one's own: here, one that prints what it is told.
func ExampleSink() {
	svc := metrics.New[string, string](tower.ServiceFunc[string, string](
		func(_ context.Context, req string) (string, error) { return req, nil }), printer{})
	tower.Call(context.Background(), svc, "hello")
	// Output:
	// InFlight +1
	// a call observed: served
	// InFlight -1
}

type printer struct{}

func (printer) Add(k metrics.Kind, delta int64) { fmt.Printf("%v %+d\n", k, delta) }
func (printer) Observe(_ time.Duration, o metrics.Outcome) {
	fmt.Println("a call observed:", o)
}
