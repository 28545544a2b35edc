// Queueing runs two programs about a Timeout that counts the time a request
// spends queued, and prints what happens in each. Under Timeout(150ms) > Buffer(8) >
// ConcurrencyLimit(1), no request takes the inner service more than 100ms,
// yet two of three callers time out: Buffer's Call only queues the request,
// so all three clocks start at 0ms and requests 2 and 3 spend their 150ms
// waiting in the buffer. Request 2 is cancelled halfway through; request 3
// is never started.
//
// A middleware cannot time the wait for readiness, since an error from Ready
// breaks the service for good, so the second program bounds each caller's
// whole wait with its own context deadline instead, over Timeout(150ms) >
// ConcurrencyLimit(1). Request 3 is cut off while it waits for the permit,
// and request 2 during its call: the handler gives up when the caller's
// context ends, because in Go only the work itself can stop a call, where
// Rust drops the call's future.
//
// It runs in real time and rounds each time to the nearest 10ms. Its test
// runs the same program on synctest's virtual clock and checks its lines
// exactly. Request 3's deadline passes at the instant request 2 gives its
// permit back; a Buffer never passes on a request whose deadline has passed,
// so the inner service never sees request 3.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/examples/internal/timeline"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/timeout"
)

// main runs both programs in real time.
func main() {
	run(os.Stdout, timeline.RealTime())
}

// run prints both programs. settle is called after each caller is started,
// so that callers arrive in order.
func run(w io.Writer, settle func()) {
	fmt.Fprintln(w, "Timeout(150ms) > Buffer(8) > ConcurrencyLimit(1)")
	queued(w, settle)
	fmt.Fprintln(w, "caller deadline 150ms over Timeout(150ms) > ConcurrencyLimit(1)")
	deadlined(w, settle)
}

// queued is the first program: the inner service prints when it starts and
// finishes each request, and the callers' lines follow once all are done.
func queued(w io.Writer, settle func()) {
	start := time.Now()
	buf := buffer.NewLayer[int, int](8)
	defer buf.Close()
	svc := stack.New[int, int]().
		Layer(timeout.NewLayer[int, int](150 * time.Millisecond)).
		Layer(buf).
		Layer(limit.NewConcurrencyLayer[int, int](1)).
		Service(tower.ServiceFunc[int, int](func(ctx context.Context, id int) (int, error) {
			fmt.Fprintf(w, "    inner: req %d starts at %dms\n", id, timeline.Since(start))
			if err := timeline.Work(ctx, 100*time.Millisecond); err != nil {
				return 0, err // cancelled halfway: no "done" line
			}
			fmt.Fprintf(w, "    inner: req %d done   at %dms\n", id, timeline.Since(start))
			return id, nil
		}))

	lines := callers(settle, func(id int) string {
		_, err := tower.Call(context.Background(), svc, id)
		ms := timeline.Since(start)
		if err != nil {
			return fmt.Sprintf("caller: req %d %q at %dms", id, err, ms)
		}
		return fmt.Sprintf("caller: req %d ok at %dms", id, ms)
	})
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// deadlined is the second program: each caller gives its whole wait,
// readiness and call, a deadline of 150ms.
func deadlined(w io.Writer, settle func()) {
	start := time.Now()
	svc := stack.New[int, int]().
		Layer(timeout.NewLayer[int, int](150 * time.Millisecond)).
		Layer(limit.NewConcurrencyLayer[int, int](1)).
		Service(tower.ServiceFunc[int, int](func(ctx context.Context, id int) (int, error) {
			return id, timeline.Work(ctx, 100*time.Millisecond)
		}))

	lines := callers(settle, func(id int) string {
		// The deadline covers waiting for the permit, too.
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		defer cancel()
		_, err := tower.Call(ctx, svc, id)
		ms := timeline.Since(start)
		switch {
		case err == nil:
			return fmt.Sprintf("req %d ok at %dms", id, ms)
		case errors.Is(err, context.DeadlineExceeded):
			// Request 3's comes from Ready; request 2's from its call,
			// where the handler gave up when the caller's context ended.
			// The Timeout passes it on unchanged: its own clock, started
			// at 100ms, would have run until 250ms.
			return fmt.Sprintf("req %d caller deadline %q at %dms", id, err, ms)
		default:
			return fmt.Sprintf("req %d service error %q at %dms", id, err, ms)
		}
	})
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// callers runs caller for requests 1, 2 and 3, each on its own goroutine,
// calling settle after starting each, and returns their lines in id order.
func callers(settle func(), caller func(id int) string) []string {
	lines := make([]string, 3)
	var wg sync.WaitGroup
	for id := 1; id <= 3; id++ {
		wg.Go(func() { lines[id-1] = caller(id) })
		settle()
	}
	wg.Wait()
	return lines
}
