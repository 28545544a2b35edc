package adaptive_test

import (
	"context"
	"fmt"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/adaptive"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/timeout"
)

// Gradient2 behind a LoadShed: the limit backpressures the stack, and a
// caller that would wait is shed. The first layer is the outermost.
func Example_gradient2() {
	handler := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		return "hello, " + req, nil
	})
	svc := stack.New[string, string]().
		Layer(loadshed.NewLayer[string, string]()).
		Layer(adaptive.NewLayer[string, string](adaptive.Gradient2())).
		Service(handler)
	fmt.Println(tower.Call(context.Background(), svc, "world"))
	// Output: hello, world <nil>
}

// New wraps one service; its limit starts at 20 by default. With Vegas
// or Gradient2 the first window is a probe, at a quarter of that, which
// measures the service's no-load latency; Limit reports the limit in
// force.
func ExampleNew() {
	echo := tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })
	l := adaptive.New[int, int](echo, adaptive.Vegas(), adaptive.WithBounds(5, 100))
	fmt.Println(l.Limit(), l.InFlight(), l.Waiting())
	// Output: 5 0 0
}

// AIMD backs off on drops: here every call times out, and each window of
// at least one drop multiplies the limit by 0.9.
func ExampleAIMD() {
	slow := tower.ServiceFunc[int, int](func(ctx context.Context, req int) (int, error) {
		return 0, timeout.ErrElapsed
	})
	l := adaptive.New[int, int](slow, adaptive.AIMD(), adaptive.WithWindow(time.Nanosecond, 1))
	for range 3 {
		time.Sleep(time.Millisecond)
		tower.Call(context.Background(), tower.Service[int, int](l), 0)
		fmt.Println(l.Limit())
	}
	// Output:
	// 18
	// 16
	// 14
}

// A priority travels in the request's ctx. Near the limit, low priority
// is refused first: a probe (a done ctx, as a LoadShed asks) finds no room
// for it while a critical request still gets in.
func ExampleWithReserve() {
	echo := tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })
	l := adaptive.New[int, int](echo, adaptive.AIMD(), adaptive.WithBounds(10, 10), adaptive.WithReserve(0.1))
	probe := func(p tower.Priority) bool {
		ctx, cancel := context.WithCancel(tower.WithPriority(context.Background(), p))
		cancel()
		perm, err := l.Ready(ctx)
		if err != nil {
			return false
		}
		defer perm.Release()
		return true
	}
	var held []tower.Permit[int, int]
	for range 8 {
		p, _ := l.Ready(context.Background())
		held = append(held, p)
	}
	fmt.Println("low:", probe(tower.PriorityLow), "normal:", probe(tower.PriorityNormal), "critical:", probe(tower.PriorityCritical))
	for i := range held {
		held[i].Release()
	}
	// Output: low: false normal: true critical: true
}

// Beyond the wait bound, Ready returns at once with a permit that sheds.
func ExampleWithMaxWaiting() {
	echo := tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })
	l := adaptive.New[int, int](echo, adaptive.AIMD(), adaptive.WithBounds(1, 1), adaptive.WithMaxWaiting(0))
	held, _ := l.Ready(context.Background())
	p, _ := l.Ready(context.Background())
	_, err := p.Call(context.Background(), 1)
	fmt.Println(err)
	held.Release()
	// Output: service overloaded
}

// halving is a user's own algorithm: it halves the limit on a drop, and
// otherwise leaves it alone.
type halving struct{}

func (halving) Update(limit float64, s adaptive.Sample) float64 {
	if s.Dropped > 0 {
		return limit / 2
	}
	return limit
}

// An Algorithm of one's own.
func ExampleAlgorithm() {
	echo := tower.ServiceFunc[int, int](func(_ context.Context, req int) (int, error) { return req, nil })
	l := adaptive.New[int, int](echo, func() adaptive.Algorithm { return halving{} }, adaptive.WithInitial(8))
	fmt.Println(l.Limit())
	// Output: 8
}
