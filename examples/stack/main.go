// Stack follows two requests through a stack of middleware to show what a
// Timeout above a ConcurrencyLimit times: under Timeout(100ms) >
// ConcurrencyLimit(1), A holds the only permit and takes 80ms; B waits for
// the permit, then takes 60ms. B finishes at 140ms, 140ms after it started
// waiting, and still does not time out: its first 80ms are spent in Ready,
// waiting for the permit, and the Timeout starts its clock only when B calls.
// So a Timeout outside a ConcurrencyLimit bounds the work after the permit,
// not the wait for it.
//
// It runs in real time and rounds each time to the nearest 10ms. Its test
// runs the same program on synctest's virtual clock and checks its lines
// exactly.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/examples/internal/timeline"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/timeout"
)

// main runs the program in real time.
func main() {
	run(os.Stdout, timeline.RealTime())
}

// sleep is the service: it takes ms milliseconds, or gives up when its
// context ends, and answers ms.
func sleep(ctx context.Context, ms int) (int, error) {
	return ms, timeline.Work(ctx, time.Duration(ms)*time.Millisecond)
}

// run prints when A and B got their answers. settle is called after B is
// started, so that B waits in Ready before A calls.
func run(w io.Writer, settle func()) {
	ctx := context.Background()
	start := time.Now()
	svc := stack.New[int, int]().
		Layer(timeout.NewLayer[int, int](100 * time.Millisecond)).
		Layer(limit.NewConcurrencyLayer[int, int](1)).
		Service(tower.ServiceFunc[int, int](sleep))

	a, err := svc.Ready(ctx) // A takes the only permit
	if err != nil {
		panic(err)
	}
	defer a.Release()

	b := make(chan string, 1)
	go func() {
		p, err := svc.Ready(ctx) // B waits here for A to give the permit back
		if err != nil {
			panic(err)
		}
		defer p.Release()
		readyAt := timeline.Since(start)
		b <- fmt.Sprintf("B: ready at %dms, %s at %dms", readyAt, result(p.Call(ctx, 60)), timeline.Since(start))
	}()
	settle()

	res := result(a.Call(ctx, 80))
	fmt.Fprintf(w, "A: %s at %dms\n", res, timeline.Since(start))
	fmt.Fprintln(w, <-b)
}

// result formats a response as "ok" and its value, or an error as "err" and
// its message.
func result(res int, err error) string {
	if err != nil {
		return fmt.Sprintf("err %q", err)
	}
	return fmt.Sprintf("ok %d", res)
}
