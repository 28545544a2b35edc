package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/breaker"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/stack"
)

// A breaker trips at the third failure in a row: the callback hears of it
// before that call returns. While open it is not ready; after the delay,
// one probe goes, and its success closes it.
func Example() {
	healthy := false
	backend := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		if !healthy {
			return "", errors.New("backend down")
		}
		return "hello, " + req, nil
	})
	svc := breaker.New(backend, breaker.AnyError,
		breaker.WithConsecutiveFailures(3),
		breaker.WithOpenDelay(10*time.Millisecond, time.Second),
		breaker.WithStateChange(func(from, to breaker.State) { fmt.Println(from, "->", to) }))
	ctx := context.Background()

	for range 3 {
		_, err := tower.Call(ctx, svc, "gopher")
		fmt.Println(err)
	}
	_, ready, _ := tower.ReadyNow[string, string](svc)
	fmt.Println("ready now:", ready)

	healthy = true
	res, err := tower.Call(ctx, svc, "gopher") // waits for the delay, then is the probe
	fmt.Println(res, err)
	// Output:
	// backend down
	// backend down
	// closed -> open
	// backend down
	// ready now: false
	// open -> half-open
	// half-open -> closed
	// hello, gopher <nil>
}

// LoadShed > Breaker: while the breaker is open, requests fail at once
// with loadshed.ErrOverloaded instead of waiting for it, and nothing is
// sent.
func Example_loadShed() {
	sent := 0
	backend := tower.ServiceFunc[string, string](func(context.Context, string) (string, error) {
		sent++
		return "", errors.New("backend down")
	})
	svc := stack.New[string, string]().
		Layer(loadshed.NewLayer[string, string]()). // outermost
		Layer(breaker.NewLayer[string, string](breaker.AnyError, breaker.WithConsecutiveFailures(1))).
		Service(backend)
	ctx := context.Background()

	for range 3 {
		_, err := tower.Call(ctx, svc, "gopher")
		fmt.Println(err)
	}
	fmt.Println("sent:", sent)
	// Output:
	// backend down
	// service overloaded
	// service overloaded
	// sent: 1
}
