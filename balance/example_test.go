package balance_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/discover"
	"github.com/towergo/tower/load"
)

// backend answers with its name.
func backend(name string) tower.Service[string, string] {
	return tower.ServiceFunc[string, string](func(context.Context, string) (string, error) { return name, nil })
}

// Of the two endpoints drawn for each request, the less loaded wins. With
// three endpoints, every pair holds "light" or "medium", so "heavy" never
// gets a request.
func ExampleP2C() {
	endpoints := discover.NewList[load.Service[string, string]](
		load.NewConstant(backend("light"), 1),
		load.NewConstant(backend("medium"), 2),
		load.NewConstant(backend("heavy"), 3),
	)
	bal := balance.NewP2C(endpoints, balance.WithRand(rand.New(rand.NewPCG(1, 1))))
	defer bal.Close()

	count := map[string]int{}
	for range 300 {
		rsp, err := tower.Call(context.Background(), bal, "hello")
		if err != nil {
			panic(err)
		}
		count[rsp]++
	}
	fmt.Println("heavy:", count["heavy"], "all:", count["light"]+count["medium"]+count["heavy"])
	// Output:
	// heavy: 0 all: 300
}

// RoundRobin takes its ready endpoints in turn.
func ExampleRoundRobin() {
	endpoints := discover.NewList(backend("a"), backend("b"), backend("c"))
	bal := balance.NewRoundRobin(endpoints)
	defer bal.Close()
	for range 4 {
		rsp, _ := tower.Call(context.Background(), bal, "hello")
		fmt.Print(rsp, " ")
	}
	fmt.Println()
	// Output:
	// a b c a
}

// A balancer with no endpoints waits for one; built WithFailFast, it fails
// the request at once instead.
func ExampleWithFailFast() {
	empty := discover.NewList[load.Service[string, string]]()
	bal := balance.NewP2C(empty, balance.WithFailFast())
	defer bal.Close()
	_, err := tower.Call(context.Background(), bal, "hello")
	fmt.Println(err)
	// Output:
	// load balancer has no endpoints
}

// An endpoint that holds connections is closed when it leaves the set:
// here, when the Discover removes its address.
func ExampleWithRemovalHandler() {
	type change = discover.Change[string, tower.Service[string, string]]
	changes := make(chan change, 2)
	closed := make(chan string, 1)
	bal := balance.NewRoundRobin(discover.Chan[string, tower.Service[string, string]](changes),
		balance.WithRemovalHandler(func(addr string, _ tower.Service[string, string]) {
			closed <- addr // close the endpoint's connections here
		}))
	defer bal.Close()

	changes <- change{Kind: discover.Insert, Key: "10.0.0.1:80", Service: backend("10.0.0.1")}
	rsp, _ := tower.Call(context.Background(), bal, "hello")
	fmt.Println("served by", rsp)
	changes <- change{Kind: discover.Remove, Key: "10.0.0.1:80"}
	fmt.Println("closed", <-closed)
	// Output:
	// served by 10.0.0.1
	// closed 10.0.0.1:80
}
