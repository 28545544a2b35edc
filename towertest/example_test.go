package towertest_test

import (
	"context"
	"fmt"
	"testing"

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

// A test runs each phase on a goroutine of its own and checks its Outcome.
// Examples have no *testing.T, so this one runs outside a synctest bubble,
// with a stand-in t, and uses Go and Expect, which need no bubble.
func ExampleMustReady() {
	var t testing.TB = exampleT{}
	mock, h := towertest.NewMock[string, string]()

	p := towertest.MustReady(t, mock)
	call := towertest.Go(func() (string, error) { return p.Call(t.Context(), "hello") })
	h.Expect(t, "hello").Respond("world")
	call.ExpectValue(t, "world")
	fmt.Println("outstanding after the call:", h.Outstanding())

	h.Allow(0)
	_, ready := towertest.ReadyNow(t, mock)
	fmt.Println("ready with Allow(0):", ready)
	// Output:
	// outstanding after the call: 0
	// ready with Allow(0): false
}

// Inside a synctest bubble, GoReady, GoCall and GoRequest return once the
// goroutine they start has gone as far as it can, and the settled
// expectations check what has happened by now, in exact virtual time.
func ExampleGoRequest() {
	// In a _test.go file:
	//
	//	func TestRetryAfterFailure(t *testing.T) {
	//		synctest.Test(t, func(t *testing.T) {
	//			mock, h := towertest.NewMock[string, string]()
	//			svc := retry.New[string, string](mock, policy)
	//			call := towertest.GoRequest(t.Context(), svc, "hello")
	//			h.ExpectSettled(t, "hello").Fail(errors.New("try again"))
	//			time.Sleep(10 * time.Millisecond) // the policy's backoff
	//			h.ExpectSettled(t, "hello").Respond("world")
	//			call.ExpectValue(t, "world")
	//			call.ExpectElapsed(t, 10*time.Millisecond)
	//			h.ExpectIdle(t, 2)
	//		})
	//	}
}

// exampleT stands in for the *testing.T an example does not have: it
// prints what a test would report.
type exampleT struct{ testing.TB }

func (exampleT) Helper()                  {}
func (exampleT) Context() context.Context { return context.Background() }

func (exampleT) Errorf(format string, args ...any) { fmt.Printf("FAIL: "+format+"\n", args...) }

func (t exampleT) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	panic("the example failed")
}
