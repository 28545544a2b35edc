package stack_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/stack"
)

// echo answers each request with itself.
func echo(_ context.Context, req string) (string, error) { return req, nil }

// show prints a call's response, or its error.
func show(rsp string, err error) {
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(rsp)
}

// LoadShed > ConcurrencyLimit(1): while one caller holds the limit's
// permit, the next is turned away at once instead of waiting.
func ExampleBuilder_LoadShed() {
	svc := stack.New[string, string]().
		LoadShed().
		ConcurrencyLimit(1).
		ServiceFunc(echo)

	ctx := context.Background()
	held, _ := svc.Ready(ctx) // the one permit
	_, err := tower.Call(ctx, svc, "b")
	fmt.Println("b:", err)
	show(held.Call(ctx, "a"))
	// Output:
	// b: service overloaded
	// a
}

// Two services under one limit of one: while one holds the permit, the
// other is not ready either. RateLimit(2, time.Second) lets two requests
// through in each second.
func ExampleBuilder_SharedConcurrencyLimit() {
	sem := limit.NewSemaphore(1)
	shared := stack.New[string, string]().SharedConcurrencyLimit(sem)
	users, orders := shared.ServiceFunc(echo), shared.ServiceFunc(echo)

	p, _ := users.Ready(context.Background())
	_, ready, _ := tower.ReadyNow(orders)
	fmt.Println("orders ready while users holds the permit:", ready)
	p.Release()

	rated := stack.New[string, string]().RateLimit(2, time.Second).ServiceFunc(echo)
	for i := range 3 {
		p, ready, _ := tower.ReadyNow(rated)
		fmt.Println("request", i+1, "ready:", ready)
		if ready {
			p.Call(context.Background(), "hello") // a place released unused would go back to the window
		}
	}
	// Output:
	// orders ready while users holds the permit: false
	// request 1 ready: true
	// request 2 ready: true
	// request 3 ready: false
}

// A Buffer's queue outlives requests: the Builder that made it closes it,
// and its callers get buffer.ErrClosed from then on.
func ExampleBuilder_Buffer() {
	queued := stack.New[string, string]().
		Buffer(8).
		ConcurrencyLimit(1)
	svc := queued.ServiceFunc(echo)

	ctx := context.Background()
	show(tower.Call(ctx, svc, "before"))
	queued.Close()
	show(tower.Call(ctx, svc, "after"))
	// Output:
	// before
	// error: buffer's worker closed unexpectedly
}

// Shutdown closes as Close does, but waits for the Buffers' requests only
// as long as its ctx lasts: here nothing was waiting.
func ExampleBuilder_Shutdown() {
	queued := stack.New[string, string]().Buffer(8)
	svc := queued.ServiceFunc(echo)
	show(tower.Call(context.Background(), svc, "hello"))

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	fmt.Println("shutdown:", queued.Shutdown(ctx))
	// Output:
	// hello
	// shutdown: <nil>
}

// The three ways to add a Retry: a classifier and the policy's options;
// the same with the Retry's own options after them (metrics, here); and a
// policy of one's own.
func ExampleBuilder_RetryWith() {
	calls := 0
	flaky := func(_ context.Context, req string) (string, error) {
		if calls++; calls%2 == 1 {
			return "", errors.New("flaky")
		}
		return req, nil
	}
	var counts metrics.Counts
	ctx := context.Background()

	svc := stack.New[string, string]().
		Retry(retry.AnyError, retry.WithMaxAttempts(2)).
		ServiceFunc(flaky)
	show(tower.Call(ctx, svc, "Retry"))

	svc = stack.New[string, string]().
		RetryWith(retry.AnyError, []retry.PolicyOption{retry.WithMaxAttempts(2)}, retry.WithMetrics(&counts)).
		ServiceFunc(flaky)
	show(tower.Call(ctx, svc, "RetryWith"))
	fmt.Println("retried:", counts.Get(metrics.Retried))

	never := retry.PolicyFunc[string, string](func(context.Context, *retry.Attempt[string, string]) (time.Duration, bool) {
		return 0, false
	})
	svc = stack.New[string, string]().RetryPolicy(never).ServiceFunc(flaky)
	show(tower.Call(ctx, svc, "RetryPolicy"))
	// Output:
	// Retry
	// RetryWith
	// retried: 1
	// error: flaky
}

// A Hedge over a limit: a request still unanswered at the 90th percentile
// of the last period's latencies, once that period saw 100 of them, is
// sent a second time. This first request has no period behind it, and
// goes once.
func ExampleBuilder_Hedge() {
	svc := stack.New[string, string]().
		Hedge(hedge.Idempotent[string]{}, 100, 0.9, 10*time.Second).
		ConcurrencyLimit(10).
		ServiceFunc(echo)
	show(tower.Call(context.Background(), svc, "hello"))
	// Output: hello
}

// A Filter rejects a request before the layers below see it, or changes
// it; an AsyncFilter's predicate also gets the call's ctx, to ask
// something that takes time under the request's deadline.
func ExampleBuilder_Filter() {
	errNoName := errors.New("no name")
	quota := map[string]bool{"gopher": true}
	svc := stack.New[string, string]().
		Filter(func(name string) (string, error) {
			if name == "" {
				return "", errNoName
			}
			return strings.ToLower(name), nil
		}).
		AsyncFilter(func(ctx context.Context, name string) (string, error) {
			if !quota[name] { // a quota store would be asked under ctx
				return "", fmt.Errorf("%s: over quota", name)
			}
			return name, ctx.Err()
		}).
		ServiceFunc(echo)

	ctx := context.Background()
	for _, name := range []string{"Gopher", "", "ferris"} {
		show(tower.Call(ctx, svc, name))
	}
	// Output:
	// gopher
	// error: no name
	// error: ferris: over quota
}

// The metrics layer counts the requests in flight below it, from the
// grant of their permit to the end of their call, and reports each
// call's latency to the same sink.
func ExampleBuilder_Metrics() {
	var counts metrics.Counts
	svc := stack.New[string, string]().
		Metrics(&counts).
		ConcurrencyLimit(10).
		ServiceFunc(echo)

	ctx := context.Background()
	p, _ := svc.Ready(ctx)
	fmt.Println("in flight after Ready:", counts.Get(metrics.InFlight))
	p.Call(ctx, "hello")
	fmt.Println("in flight after the call:", counts.Get(metrics.InFlight))
	// Output:
	// in flight after Ready: 1
	// in flight after the call: 0
}

// Layers of one's own, and one Builder inside others: a part that two
// stacks have in common. A Builder is a tower.Layer, so Wrap wraps a
// service as Service does.
func ExampleBuilder_Layer() {
	shout := tower.MapResponseLayer[string, string](strings.ToUpper)
	common := stack.New[string, string]().Timeout(time.Second).Layer(shout)
	var inner tower.Service[string, string] = tower.ServiceFunc[string, string](echo)

	public := stack.New[string, string]().LoadShed().Layer(common).Service(inner)
	internal := common.Wrap(inner)

	ctx := context.Background()
	show(tower.Call(ctx, public, "public"))
	show(tower.Call(ctx, internal, "internal"))
	// Output:
	// PUBLIC
	// INTERNAL
}
