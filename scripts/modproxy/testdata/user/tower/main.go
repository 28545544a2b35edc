// A user's program of the core module alone: a token bucket of 2 in front
// of a service, asked three times at once.
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
)

func main() {
	hello := tower.ServiceFunc[string, string](func(_ context.Context, name string) (string, error) { return "hello, " + name, nil })
	svc := limit.NewBucket(hello, 1, time.Hour, 2)
	for _, name := range []string{"a", "b", "c"} {
		p, ok, err := tower.ReadyNow[string, string](svc)
		if !ok || err != nil {
			fmt.Println(name, "not ready", err)
			continue
		}
		fmt.Println(p.Call(context.Background(), name))
	}
}
