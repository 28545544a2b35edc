package towerredis_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/towerredis"
	"github.com/towergo/tower/towerredis/redistest"
)

// exampleRedis starts a redis-server for an example and returns a client
// of it and a function that stops both; a program uses its own Redis.
func exampleRedis() (*redis.Client, func(), error) {
	dir, err := os.MkdirTemp("", "towerredis")
	if err != nil {
		return nil, nil, err
	}
	srv, err := redistest.StartServer(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	// ContextTimeoutEnabled lets the limit bound each round trip.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	return rdb, func() { rdb.Close(); srv.Stop(); os.RemoveAll(dir) }, nil
}

var hello = tower.ServiceFunc[string, string](func(_ context.Context, name string) (string, error) {
	return "hello, " + name, nil
})

// Two replicas share one limit of 100 requests a second with a burst of
// 2: once the burst is spent on one replica, the other is not ready now
// either, and a caller that waits gets the next token 10ms later.
func ExampleNewBucket() {
	rdb, stop, err := exampleRedis()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	a := towerredis.NewBucket(hello, rdb, "greetings", 100, time.Second, 2)
	b := towerredis.NewBucket(hello, rdb, "greetings", 100, time.Second, 2)
	for range 2 {
		p, ready, _ := tower.ReadyNow(a)
		fmt.Println("a ready now:", ready)
		p.Call(context.Background(), "a")
	}
	_, ready, _ := tower.ReadyNow(b)
	fmt.Println("b ready now:", ready)

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	fmt.Println(tower.Call(ctx, b, "b")) // waits for the next token
	// Output:
	// a ready now: true
	// a ready now: true
	// b ready now: false
	// hello, b <nil>
}

// A limit per tenant: each tenant has 1 request a minute, and the
// fleet's replicas share each tenant's bucket. A tenant over its rate is
// refused at once, with an error that says so.
func ExampleNewKeyed() {
	rdb, stop, err := exampleRedis()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	tenant := func(req string) string { return req }
	svc := towerredis.NewKeyed(hello, rdb, "tenants", tenant, 1, time.Minute, 1)
	ctx := context.Background()
	fmt.Println(tower.Call(ctx, svc, "alice"))
	_, err = tower.Call(ctx, svc, "alice")
	fmt.Println("alice again: throttled:", tower.IsThrottled(err))
	fmt.Println(tower.Call(ctx, svc, "bob"))
	// Output:
	// hello, alice <nil>
	// alice again: throttled: true
	// hello, bob <nil>
}

// WithBatch takes tokens 5 at a time: 10 requests cost 2 round trips,
// which WithObserver counts, as a benchmark or a dashboard would. (A
// batch's tokens are kept for the bucket's span, burst·interval, here 1s:
// a token not used by then is lost, and the next request asks again.)
func ExampleWithBatch() {
	rdb, stop, err := exampleRedis()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	var trips atomic.Int64
	svc := towerredis.NewBucket(hello, rdb, "batched", 10, time.Second, 10,
		towerredis.WithBatch(5),
		towerredis.WithObserver(func(towerredis.RoundTrip) { trips.Add(1) }))
	for range 10 {
		if _, err := tower.Call(context.Background(), svc, "x"); err != nil {
			fmt.Println(err)
		}
	}
	fmt.Println("round trips:", trips.Load())
	// Output:
	// round trips: 2
}

// The limit as a layer of a stack, failing closed: a replica whose Redis
// is away admits nothing rather than everything.
func ExampleNewBucketLayer() {
	rdb, stop, err := exampleRedis()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	svc := stack.New[string, string]().
		Layer(towerredis.NewBucketLayer[string, string](rdb, "api", 50, time.Second, 10,
			towerredis.WithFailMode(towerredis.FailClosed),
			towerredis.WithTimeout(time.Second))). // generous, for a first round trip that dials
		Service(hello)
	fmt.Println(tower.Call(context.Background(), svc, "layer"))
	// Output:
	// hello, layer <nil>
}
