package towertest_test

import (
	"context"
	"fmt"

	"github.com/towergo/tower"
	"github.com/towergo/tower/towertest"
)

// The handle decides when the mock is ready, and answers its requests.
func ExampleNewMock() {
	mock, h := towertest.NewMock[string, string]()

	h.Allow(0)
	_, ready, _ := tower.ReadyNow(mock)
	fmt.Println("ready with Allow(0):", ready)

	h.Allow(1)
	done := make(chan string)
	go func() {
		rsp, _ := tower.Call(context.Background(), mock, "hello")
		done <- rsp
	}()
	req, _ := h.Next(context.Background())
	fmt.Println("mock received:", req.Value)
	req.Respond("world")
	fmt.Println("caller got:", <-done)
	// Output:
	// ready with Allow(0): false
	// mock received: hello
	// caller got: world
}

// Bench measures what a stack adds per request, over a handler that answers
// at once.
func ExampleBench() {
	// In a _test.go file:
	//
	//	func BenchmarkStack(b *testing.B) {
	//		svc := limit.NewConcurrency(tower.ServiceFunc[int, int](echo), 100)
	//		towertest.Bench(b, svc, 1)
	//	}
}
