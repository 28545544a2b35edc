package readycache_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/towergo/tower"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/readycache"
)

var upper = tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
	return strings.ToUpper(req), nil
})

// first picks the first ready endpoint.
type first struct{}

func (first) Pick([]tower.Service[string, string]) int { return 0 }

// Endpoint "a" is always ready; "b" takes one request at a time. Taking b's
// permit leaves it pending until the request is done, and then a goroutine
// of the cache finds it ready again.
func Example() {
	ctx := context.Background()
	c := readycache.New[string, string, string, tower.Service[string, string]]()
	defer c.Close()
	c.Push("a", upper)
	c.Push("b", limit.NewConcurrency[string, string](upper, 1))
	fmt.Println("ready:", c.ReadyLen())

	p, _ := c.TakeKey("b")
	fmt.Println("b ready while its only permit is out:", c.IsReady("b"))
	rsp, _ := p.Call(ctx, "hello")
	fmt.Println(rsp)

	for { // wait for b's goroutine to bring it back
		changed := c.Changed()
		if c.IsReady("b") {
			break
		}
		<-changed
	}
	fmt.Println("b ready again:", c.IsReady("b"))

	key, q, _ := c.Take(ctx, first{})
	rsp, _ = q.Call(ctx, "world")
	fmt.Println(key, rsp)
	// Output:
	// ready: 2
	// b ready while its only permit is out: false
	// HELLO
	// b ready again: true
	// a WORLD
}
