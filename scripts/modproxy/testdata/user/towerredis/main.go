// A user's program of towerredis: a real redis-server (redistest), a
// Bucket of 2 for the fleet, and a Keyed whose refusal is limit's
// KeyLimitError.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towerredis"
	"github.com/towergo/tower/towerredis/redistest"
)

func main() {
	dir, err := os.MkdirTemp("", "usercheck")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	srv, err := redistest.StartServer(dir)
	if err != nil {
		panic(err)
	}
	defer srv.Stop()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	defer rdb.Close()
	hello := tower.ServiceFunc[string, string](func(_ context.Context, name string) (string, error) { return "hello, " + name, nil })

	bucket := towerredis.NewBucket(hello, rdb, "usercheck", 1, time.Hour, 2, towerredis.WithTimeout(time.Second))
	for _, name := range []string{"a", "b", "c"} {
		p, ok, err := tower.ReadyNow[string, string](bucket)
		if !ok || err != nil {
			fmt.Println(name, "not ready", err)
			continue
		}
		fmt.Println(p.Call(context.Background(), name))
	}

	keyed := towerredis.NewKeyed(hello, rdb, "usercheck", func(s string) string { return s }, 1, time.Hour, 1, towerredis.WithTimeout(time.Second))
	fmt.Println(tower.Call[string, string](context.Background(), keyed, "k"))
	_, err = tower.Call[string, string](context.Background(), keyed, "k")
	var kle *limit.KeyLimitError
	fmt.Println("refused:", errors.As(err, &kle), tower.IsThrottled(err))
}
