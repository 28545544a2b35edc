// Placement prints what a Timeout measures depending on where it sits:
// three callers, each request taking 100ms, a ConcurrencyLimit of 1 and a
// Timeout of 150ms, in three placements. Where the Timeout sits decides
// whether queueing counts against it:
//
//   - A: Timeout > ConcurrencyLimit(1). Callers wait for the permit in
//     Ready, before the Timeout's clock starts: nothing times out.
//   - B: Timeout > Buffer > ConcurrencyLimit(1). Buffer's Ready only
//     reserves a queue slot, so all three calls, and all three clocks, start
//     at 0ms; requests 2 and 3 spend their 150ms queueing and time out.
//   - C: Buffer > Timeout > ConcurrencyLimit(1). A queued request calls the
//     Timeout only once its turn comes and the limit lets it through:
//     nothing times out.
//
// It runs in real time and rounds each time to the nearest 10ms. Its test
// runs the same program on synctest's virtual clock and checks the table
// line for line.
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

func main() {
	run(os.Stdout, timeline.RealTime())
}

// work takes 100ms per request, or gives up when its context ends.
func work(ctx context.Context, id int) (int, error) {
	return id, timeline.Work(ctx, 100*time.Millisecond)
}

// run prints the three placements. settle is called after each caller is
// started, so that callers arrive in order.
func run(w io.Writer, settle func()) {
	const t = 150 * time.Millisecond
	handler := tower.ServiceFunc[int, int](work)
	b := stack.New[int, int]()

	a := b.Layer(timeout.NewLayer[int, int](t)).
		Layer(limit.NewConcurrencyLayer[int, int](1)).
		Service(handler)
	scenario(w, "A: Timeout > ConcurrencyLimit(1)", a, settle)

	buf := buffer.NewLayer[int, int](8)
	bsvc := b.Layer(timeout.NewLayer[int, int](t)).
		Layer(buf).
		Layer(limit.NewConcurrencyLayer[int, int](1)).
		Service(handler)
	scenario(w, "B: Timeout > Buffer > ConcurrencyLimit(1)", bsvc, settle)
	buf.Close()

	buf = buffer.NewLayer[int, int](8)
	c := b.Layer(buf).
		Layer(timeout.NewLayer[int, int](t)).
		Layer(limit.NewConcurrencyLayer[int, int](1)).
		Service(handler)
	scenario(w, "C: Buffer > Timeout > ConcurrencyLimit(1)", c, settle)
	buf.Close()
}

// scenario sends requests 1, 2 and 3 at once, each from its own caller, and
// prints when each got its answer.
func scenario(w io.Writer, name string, svc tower.Service[int, int], settle func()) {
	start := time.Now()
	lines := make([]string, 3)
	var wg sync.WaitGroup
	for id := 1; id <= 3; id++ {
		wg.Go(func() {
			res, err := tower.Call(context.Background(), svc, id)
			ms := timeline.Since(start)
			if err != nil {
				lines[id-1] = fmt.Sprintf("  req %d: err %q, is Elapsed = %t, at %dms",
					id, err, errors.Is(err, timeout.ErrElapsed), ms)
				return
			}
			lines[id-1] = fmt.Sprintf("  req %d: ok %d at %dms", id, res, ms)
		})
		settle()
	}
	wg.Wait()
	fmt.Fprintln(w, name)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
