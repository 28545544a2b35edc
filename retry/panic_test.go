package retry_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towertest"
)

// secondClonePanics retries every error, and its Clone panics from its
// second call on: before the first retry is sent.
type secondClonePanics struct {
	retry.PolicyFunc[string, string]
	clones atomic.Int32
}

func (p *secondClonePanics) Clone(req string) (string, bool) {
	if p.clones.Add(1) > 1 {
		panic("clone exploded")
	}
	return req, true
}

// panicSink is a metrics sink whose Add panics.
type panicSink struct{}

func (panicSink) Add(metrics.Kind, int64)                { panic("sink exploded") }
func (panicSink) Observe(time.Duration, metrics.Outcome) {}

// The Retry runs all the user code it calls on the caller's goroutine, and
// a panic there goes on up to the caller. A panic between a retry's Ready
// and its Call, in the policy's Clone or in the metrics sink, gives the
// retry's reservation back first.
func TestRetryPanicBeforeRetryReleasesPermit(t *testing.T) {
	retryAll := func(_ context.Context, a *retry.Attempt[string, string]) (time.Duration, bool) {
		return 0, a.Err != nil
	}
	for _, tt := range []struct {
		name   string
		policy retry.Policy[string, string]
		opts   []retry.Option
		want   string
	}{
		{"Clone", &secondClonePanics{PolicyFunc: retryAll}, nil, "clone exploded"},
		{"MetricsAdd", retry.PolicyFunc[string, string](retryAll), []retry.Option{retry.WithMetrics(panicSink{})}, "sink exploded"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := towertest.NewMock[string, string]()
				svc := retry.New[string, string](mock, tt.policy, tt.opts...)
				done := make(chan any, 1)
				go func() {
					defer func() { done <- recover() }()
					tower.Call[string, string](t.Context(), svc, "hello")
				}()
				h.ExpectSettled(t, "hello").Fail(errors.New("try again"))
				if got := <-done; got != tt.want {
					t.Errorf("got panic %v, want %q", got, tt.want)
				}
				h.ExpectIdle(t, 1)
			})
		})
	}
}

// sessionPanics is a SessionPolicy whose NewSession panics.
type sessionPanics struct {
	retry.PolicyFunc[string, string]
}

func (sessionPanics) NewSession() retry.Policy[string, string] { panic("boom") }

// clonePanics is a policy whose Clone panics.
type clonePanics struct {
	retry.PolicyFunc[string, string]
}

func (clonePanics) Clone(string) (string, bool) { panic("boom") }

// attemptTracer is a Tracer whose StartAttempt (start) or EndAttempt
// panics.
type attemptTracer struct{ start bool }

func (attemptTracer) Waited(context.Context, metrics.Wait) {}

func (a attemptTracer) StartAttempt(ctx context.Context, _ metrics.Attempt) context.Context {
	if a.start {
		panic("boom")
	}
	return ctx
}

func (a attemptTracer) EndAttempt(context.Context, error) {
	if !a.start {
		panic("boom")
	}
}

// The rest of the user code the Retry runs on the caller's goroutine: the
// session, the first Clone, Retry, and the request's Tracer. A panic there
// goes on up to the caller with nothing reserved, whether the first
// attempt was sent, a retry was, or neither.
func TestRetryPanicLeavesNothingReserved(t *testing.T) {
	retryAll := retry.PolicyFunc[string, string](func(_ context.Context, a *retry.Attempt[string, string]) (time.Duration, bool) {
		return 0, a.Err != nil
	})
	for _, tt := range []struct {
		name   string
		policy retry.Policy[string, string]
		tracer metrics.Tracer // nil: none
		calls  int            // sent before the panic
	}{
		{"NewSession", sessionPanics{retryAll}, nil, 0},
		{"FirstClone", clonePanics{retryAll}, nil, 0},
		{"Retry", retry.PolicyFunc[string, string](func(context.Context, *retry.Attempt[string, string]) (time.Duration, bool) {
			panic("boom")
		}), nil, 1},
		{"StartAttempt", retryAll, attemptTracer{start: true}, 1},
		{"EndAttempt", retryAll, attemptTracer{}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := towertest.NewMock[string, string]()
				svc := retry.New[string, string](mock, tt.policy)
				ctx := t.Context()
				if tt.tracer != nil {
					ctx = metrics.WithTracer(ctx, tt.tracer)
				}
				done := make(chan any, 1)
				go func() {
					defer func() { done <- recover() }()
					tower.Call[string, string](ctx, svc, "hello")
				}()
				for range tt.calls {
					h.ExpectSettled(t, "hello").Fail(errors.New("try again"))
				}
				if got := <-done; got != "boom" {
					t.Errorf("got panic %v, want boom", got)
				}
				h.ExpectIdle(t, tt.calls)
			})
		})
	}
}
