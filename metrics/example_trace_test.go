package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/retry"
)

// printTracer is a Tracer that prints what it hears, but for the times.
type printTracer struct{}

func (printTracer) Waited(_ context.Context, w metrics.Wait) {
	fmt.Printf("%v wait over, err=%v\n", w.Kind, w.Err)
}

func (printTracer) StartAttempt(ctx context.Context, a metrics.Attempt) context.Context {
	fmt.Printf("%v: attempt %d, %v after %v\n", a.Kind, a.N, a.Delay, a.Cause)
	return ctx // a Tracer that records spans returns a context with the attempt's
}

func (printTracer) EndAttempt(_ context.Context, err error) {
	fmt.Printf("attempt ended, err=%v\n", err)
}

// A Tracer in a request's context hears from the middleware below: here
// a Buffer, of the time the request queued, and a Retry, of the retry it
// made. The request queues while the limit's only permit is held, then
// fails once, and its retry succeeds.
func ExampleWithTracer() {
	fails := 1
	flaky := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		if fails > 0 {
			fails--
			return "", errors.New("unavailable")
		}
		return req, nil
	})
	limited := limit.NewConcurrency[string, string](flaky, 1)
	var counts metrics.Counts // to see when the request has queued
	buf := buffer.New[string, string](limited, 8, buffer.WithMetrics(&counts))
	defer buf.Close()
	svc := retry.New[string, string](buf, retry.PolicyFunc[string, string](
		func(_ context.Context, a *retry.Attempt[string, string]) (time.Duration, bool) {
			return 10 * time.Millisecond, a.Err != nil && a.N < 3
		}))

	held, _ := limited.Ready(context.Background())
	ctx := metrics.WithTracer(context.Background(), printTracer{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		fmt.Println(tower.Call(ctx, svc, "hello"))
	}()
	for counts.Get(metrics.Queued) == 0 {
		runtime.Gosched()
	}
	held.Release() // the queued request gets the permit
	<-done
	// Output:
	// queue wait over, err=<nil>
	// retry: attempt 2, 10ms after unavailable
	// attempt ended, err=<nil>
	// hello <nil>
}

// TracerFrom is how a middleware finds the request's Tracer, on the path
// of a request that has something to report.
func ExampleTracerFrom() {
	ctx := context.Background()
	fmt.Println(metrics.TracerFrom(ctx) != nil)
	ctx = metrics.WithTracer(ctx, printTracer{})
	if t := metrics.TracerFrom(ctx); t != nil {
		t.Waited(ctx, metrics.Wait{Kind: metrics.ReadyWait, Duration: 30 * time.Millisecond})
	}
	// Output:
	// false
	// ready wait over, err=<nil>
}

// The kinds of waits and attempts a Tracer hears of.
func ExampleAttemptKind() {
	fmt.Println(metrics.ReadyWait, metrics.QueueWait)
	fmt.Println(metrics.RetryAttempt, metrics.HedgeAttempt)
	// Output:
	// ready queue
	// retry hedge
}
