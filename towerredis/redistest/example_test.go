package redistest_test

import (
	"context"
	"fmt"
	"os"

	"github.com/redis/go-redis/v9"
	"github.com/towergo/tower/towerredis/redistest"
)

// A test of your own against a real Redis: in a test, redistest.Start(t)
// does all this and stops the server when the test ends.
func Example() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	srv, err := redistest.StartServer(dir)
	if err != nil {
		fmt.Println(err) // redis-server is not installed: apt-get install redis-server ...
		return
	}
	defer srv.Stop()

	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	defer rdb.Close()
	fmt.Println(rdb.Ping(context.Background()).Val())
	// Output: PONG
}
