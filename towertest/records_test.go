package towertest_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// A LogRecorder keeps each record as one line, without the time, for a
// test to compare.
func ExampleNewLogRecorder() {
	rec, logger := towertest.NewLogRecorder()
	logger.Warn("dropped an endpoint", "endpoint", "10.0.0.1:80", "err", errors.New("connection refused"))
	logger.With("target", "db-1").Error("broken for good")
	for _, line := range rec.Lines() {
		fmt.Println(line)
	}
	// Output:
	// WARN dropped an endpoint endpoint=10.0.0.1:80 err=connection refused
	// ERROR broken for good target=db-1
}

func TestLogRecorderGroups(t *testing.T) {
	rec, logger := towertest.NewLogRecorder()
	logger.WithGroup("g").With("a", 1).Info("m", slog.Group("h", "b", 2), "c", 3, slog.Attr{})
	logger.Debug("all levels", slog.Group("", "inline", true))
	want := []string{
		"INFO m g.a=1 g.h.b=2 g.c=3",
		"DEBUG all levels inline=true",
	}
	if got := rec.Lines(); !slices.Equal(got, want) {
		t.Errorf("got lines\n%q\nwant\n%q", got, want)
	}
	rec.Reset()
	if got := rec.Lines(); len(got) != 0 {
		t.Errorf("after Reset, got lines %q, want none", got)
	}
}

// A logger that panics, for a test of what a middleware does when the
// logger it was given panics.
func ExamplePanickingLogger() {
	logger := towertest.PanickingLogger("handler's bug")
	defer func() { fmt.Println("recovered:", recover()) }()
	logger.Warn("anything")
	// Output:
	// recovered: handler's bug
}

// A TraceRecorder in a request's context hears what the middleware below
// report to a metrics.Tracer, with times exact under testing/synctest.
func ExampleNewTraceRecorder() {
	// In a _test.go file:
	//
	//	func TestRetryTrace(t *testing.T) {
	//		synctest.Test(t, func(t *testing.T) {
	//			rec := towertest.NewTraceRecorder()
	//			mock, h := towertest.NewMock[string, string]()
	//			svc := retry.New[string, string](mock, backoff10ms)
	//			call := towertest.GoRequest(metrics.WithTracer(t.Context(), rec), svc, "hello")
	//			h.ExpectSettled(t, "hello").Fail(errors.New("unavailable"))
	//			time.Sleep(10 * time.Millisecond) // the backoff
	//			r := h.ExpectSettled(t, "hello")
	//			if a, ok := rec.Attempt(r.Context()); !ok || a.N != 2 {
	//				t.Error("the retry is not sent under its attempt's context")
	//			}
	//			r.Respond("world")
	//			call.ExpectValue(t, "world")
	//			// rec.Lines(): "retry 2 start 0s delay=10ms cause=unavailable", "retry 2 end 10ms"
	//		})
	//	}
}

// A TraceRecorder records each wait and attempt as a line, with its times
// from the recorder's start, and the error or cause when there is one.
func TestTraceRecorder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := towertest.NewTraceRecorder()
		ctx := context.Background()
		time.Sleep(5 * time.Millisecond)
		rec.Waited(ctx, metrics.Wait{Kind: metrics.QueueWait, Start: time.Now(), Duration: 30 * time.Millisecond, Err: errors.New("closed")})
		actx := rec.StartAttempt(ctx, metrics.Attempt{Kind: metrics.HedgeAttempt, N: 2, Delay: 5 * time.Millisecond})
		if a, ok := rec.Attempt(actx); !ok || a.N != 2 {
			t.Errorf("Attempt of the attempt's context: got %v, %v", a, ok)
		}
		if _, ok := rec.Attempt(ctx); ok {
			t.Error("Attempt of another context: got true")
		}
		time.Sleep(3 * time.Millisecond)
		rec.EndAttempt(actx, nil)
		rec.EndAttempt(ctx, errors.New("no attempt"))
		rec.StartAttempt(ctx, metrics.Attempt{Kind: metrics.RetryAttempt, N: 3, Delay: 10 * time.Millisecond, Cause: errors.New("unavailable")})
		want := []string{
			"queue wait 5ms..35ms err=closed",
			"hedge 2 start 5ms delay=5ms",
			"hedge 2 end 8ms",
			"? 0 end 8ms err=no attempt",
			"retry 3 start 8ms delay=10ms cause=unavailable",
		}
		if got := rec.Lines(); !slices.Equal(got, want) {
			t.Errorf("got lines\n%q\nwant\n%q", got, want)
		}
	})
}
