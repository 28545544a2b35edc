package metrics_test

import (
	"context"
	"testing"

	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// nopTracer hears everything and does nothing.
type nopTracer struct{}

func (nopTracer) Waited(context.Context, metrics.Wait) {}
func (nopTracer) StartAttempt(ctx context.Context, _ metrics.Attempt) context.Context {
	return ctx
}
func (nopTracer) EndAttempt(context.Context, error) {}

func TestTracerFrom(t *testing.T) {
	ctx := context.Background()
	if got := metrics.TracerFrom(ctx); got != nil {
		t.Errorf("TracerFrom(Background) = %v, want nil", got)
	}
	var tr metrics.Tracer = nopTracer{}
	ctx = metrics.WithTracer(ctx, tr)
	if got := metrics.TracerFrom(ctx); got != tr {
		t.Errorf("TracerFrom = %v, want the tracer given", got)
	}
	// The closest one wins, as for any context value.
	inner := &recordingTracer{}
	if got := metrics.TracerFrom(metrics.WithTracer(ctx, inner)); got != inner {
		t.Errorf("TracerFrom of a context given two = %v, want the last", got)
	}
}

func TestWithTracerNil(t *testing.T) {
	towertest.Panics(t, "metrics.WithTracer: nil tracer", func() {
		metrics.WithTracer(context.Background(), nil)
	})
	towertest.Panics(t, "metrics.WithTracer: nil tracer", func() {
		metrics.WithTracer(context.Background(), (*recordingTracer)(nil))
	})
}

func TestKindStrings(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{metrics.ReadyWait.String(), "ready"},
		{metrics.QueueWait.String(), "queue"},
		{metrics.WaitKind(0).String(), "WaitKind(0)"},
		{metrics.WaitKind(9).String(), "WaitKind(9)"},
		{metrics.RetryAttempt.String(), "retry"},
		{metrics.HedgeAttempt.String(), "hedge"},
		{metrics.AttemptKind(0).String(), "AttemptKind(0)"},
		{metrics.AttemptKind(7).String(), "AttemptKind(7)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// recordingTracer is a Tracer that a test can give as a pointer.
type recordingTracer struct{ nopTracer }
