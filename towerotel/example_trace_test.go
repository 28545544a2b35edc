package towerotel_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/towerotel"
)

// A trace layer outermost records the wait in Ready of each request that
// has a sampled span, and, below it, the Retry records the request's
// retry: here the first attempt fails, and the retry, after a 5ms
// backoff, succeeds. The span recorder stands for an exporter; the spans
// are printed without their times.
func ExampleNewTraceLayer() {
	recorder := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder)).Tracer("example")

	fails := 1
	flaky := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) {
		if fails > 0 {
			fails--
			return "", errors.New("unavailable")
		}
		return "hello, " + req, nil
	})
	policy := retry.PolicyFunc[string, string](func(_ context.Context, a *retry.Attempt[string, string]) (time.Duration, bool) {
		return 5 * time.Millisecond, a.Err != nil && a.N < 3
	})
	svc := stack.New[string, string]().
		Layer(towerotel.NewTraceLayer[string, string](tracer)). // outermost: sees the whole wait
		Layer(retry.NewLayer(policy)).
		Service(flaky)

	ctx, span := tracer.Start(context.Background(), "request") // the caller's span
	fmt.Println(tower.Call(ctx, svc, "world"))
	span.End()

	for _, s := range recorder.Ended() {
		fmt.Print(s.Name())
		for _, kv := range s.Attributes() {
			fmt.Printf(" %s=%s", kv.Key, kv.Value.String())
		}
		fmt.Println()
	}
	// Output:
	// hello, world <nil>
	// tower.ready
	// tower.retry tower.attempt=2 tower.retry.backoff=0.005 tower.retry.cause=unavailable
	// request
}

// A Tracer put in a request's context by hand, for the middleware below
// that reports to one, without a trace layer to time Ready: here a
// Buffer, whose request queues while its inner limit's only permit is
// held. The spans carry the attribute given to the Tracer.
func ExampleNewTracer() {
	recorder := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder)).Tracer("example")
	t := towerotel.NewTracer(tracer, towerotel.WithSpanAttributes(attribute.String("tower.stack", "users-db")))

	echo := tower.ServiceFunc[string, string](func(_ context.Context, req string) (string, error) { return req, nil })
	inner := limit.NewConcurrency[string, string](echo, 1)
	var counts metrics.Counts // to see when the request has queued
	buf := buffer.New[string, string](inner, 8, buffer.WithMetrics(&counts))
	defer buf.Close()

	held, _ := inner.Ready(context.Background())
	ctx, span := tracer.Start(context.Background(), "request")
	done := make(chan struct{})
	go func() {
		defer close(done)
		fmt.Println(tower.Call(metrics.WithTracer(ctx, t), buf, "queued"))
	}()
	for counts.Get(metrics.Queued) == 0 {
		runtime.Gosched()
	}
	held.Release()
	<-done
	span.End()

	for _, s := range recorder.Ended() {
		fmt.Print(s.Name())
		for _, kv := range s.Attributes() {
			fmt.Printf(" %s=%s", kv.Key, kv.Value.String())
		}
		fmt.Println()
	}
	// Output:
	// queued <nil>
	// tower.queue tower.stack=users-db
	// request
}

// The names of the spans a Tracer records, and the attributes of those of
// retries and hedges, to look for in a trace backend.
func Example_spanNames() {
	fmt.Println(towerotel.ReadySpanName, towerotel.QueueSpanName, towerotel.RetrySpanName, towerotel.HedgeSpanName)
	fmt.Println(towerotel.AttemptKey, towerotel.BackoffKey, towerotel.CauseKey, towerotel.DelayKey)
	// Output:
	// tower.ready tower.queue tower.retry tower.hedge
	// tower.attempt tower.retry.backoff tower.retry.cause tower.hedge.delay
}
