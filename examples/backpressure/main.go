// Backpressure shows where a caller waits when a service is full: five
// callers share a ConcurrencyLimit(2), each request taking 100ms, and each
// caller waits for readiness before it calls. Requests 3, 4 and 5 wait in
// Ready, before they are sent, while requests 1 and 2 hold the permits; 3
// and 4 get theirs at 100ms, 5 at 200ms. Each
// request takes exactly 100ms from ready to done: the service's work does
// not change, and all the waiting happens in Ready, where the caller has not
// built or sent anything yet. That is backpressure.
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
	"sync"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/examples/internal/timeline"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/stack"
)

// main runs the experiment in real time.
func main() {
	run(os.Stdout, timeline.RealTime())
}

// work takes 100ms per request, or gives up when its context ends.
func work(ctx context.Context, id int) (int, error) {
	return id, timeline.Work(ctx, 100*time.Millisecond)
}

// run sends requests 1 to 5, each from its own caller, and prints when each
// was ready and done, in id order. settle is called after each caller is
// started, so that callers arrive in order.
func run(w io.Writer, settle func()) {
	ctx := context.Background()
	start := time.Now()
	svc := stack.New[int, int]().
		Layer(limit.NewConcurrencyLayer[int, int](2)).
		Service(tower.ServiceFunc[int, int](work))

	lines := make([]string, 5)
	var wg sync.WaitGroup
	for id := 1; id <= 5; id++ {
		wg.Go(func() {
			// Each caller shares the service and holds its own permit.
			p, err := svc.Ready(ctx)
			if err != nil {
				panic(err)
			}
			defer p.Release()
			readyAt := timeline.Since(start)
			res, err := p.Call(ctx, id)
			if err != nil {
				panic(err)
			}
			lines[id-1] = fmt.Sprintf("req %d: ready at %3dms, done at %3dms", res, readyAt, timeline.Since(start))
		})
		settle()
	}
	wg.Wait()
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
