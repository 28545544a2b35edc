package towerredis_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/towerredis"
	"github.com/towergo/tower/towerredis/redistest"
)

// Two replicas of a service share one limit of a single request in
// flight: while one holds the lease, the other is not ready.
func ExampleNewConcurrency() {
	// A redis-server for the example; a program uses its own Redis.
	dir, _ := os.MkdirTemp("", "towerredis")
	defer os.RemoveAll(dir)
	srv, err := redistest.StartServer(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()

	// ContextTimeoutEnabled lets the limit bound each round trip.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	defer rdb.Close()
	report := tower.ServiceFunc[string, string](func(_ context.Context, month string) (string, error) {
		return "report for " + month, nil
	})
	// A replica that crashes while it holds the lease gives it back to
	// the fleet within 10s, its TTL.
	a := towerredis.NewConcurrency(report, rdb, "reports", 1, 10*time.Second)
	b := towerredis.NewConcurrency(report, rdb, "reports", 1, 10*time.Second)

	p, err := a.Ready(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	_, ready, _ := tower.ReadyNow(b)
	fmt.Println("b ready while a holds the lease:", ready)
	fmt.Println(p.Call(context.Background(), "March"))
	q, ready, _ := tower.ReadyNow(b)
	fmt.Println("b ready once a is done:", ready)
	q.Release()
	// Output:
	// b ready while a holds the lease: false
	// report for March <nil>
	// b ready once a is done: true
}

// The limit as a layer of a stack: at most 4 requests in flight across
// the fleet, and a replica whose Redis is away admits nothing
// (FailClosed) rather than everything.
func ExampleNewConcurrencyLayer() {
	dir, _ := os.MkdirTemp("", "towerredis")
	defer os.RemoveAll(dir)
	srv, err := redistest.StartServer(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	defer rdb.Close()

	svc := stack.New[string, string]().
		Layer(towerredis.NewConcurrencyLayer[string, string](rdb, "exports", 4, 30*time.Second,
			towerredis.WithFailMode(towerredis.FailClosed),
			towerredis.WithTimeout(time.Second))). // generous, for a first round trip that dials
		Service(tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
			return "exported " + req, nil
		}))
	fmt.Println(tower.Call(context.Background(), svc, "orders.csv"))
	// Output:
	// exported orders.csv <nil>
}
