package throttle_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/throttle"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towertest"
)

// ErrThrottled says what happened, and answers both Overloaded and
// Throttled, wrapped too: the adapters answer it as an overload (metrics
// calls it shed), and it is not a service that takes nothing.
func TestErrThrottled(t *testing.T) {
	if got, want := throttle.ErrThrottled.Error(), "request throttled: backend overloaded"; got != want {
		t.Errorf("message: got %q, want %q", got, want)
	}
	for _, err := range []error{throttle.ErrThrottled, fmt.Errorf("call: %w", throttle.ErrThrottled)} {
		if !tower.IsOverloaded(err) || !tower.IsThrottled(err) || tower.IsUnavailable(err) || tower.IsTimeout(err) {
			t.Errorf("%v: IsOverloaded %t, IsThrottled %t, IsUnavailable %t, IsTimeout %t; want true, true, false, false",
				err, tower.IsOverloaded(err), tower.IsThrottled(err), tower.IsUnavailable(err), tower.IsTimeout(err))
		}
		if got := metrics.OutcomeOf(err); got != metrics.OutcomeShed {
			t.Errorf("%v: outcome %v, want %v", err, got, metrics.OutcomeShed)
		}
	}
}

// throttledOnly answers Throttled, as a user's quota error would.
type throttledOnly struct{ yes bool }

func (throttledOnly) Error() string     { return "over quota" }
func (e throttledOnly) Throttled() bool { return e.yes }

// NotOverloaded accepts a response and any error but an overload, a
// throttling or an unavailable service, wrapped or not.
func TestNotOverloaded(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, true},
		{errors.New("not found"), true},
		{timeout.ErrElapsed, true},
		{context.DeadlineExceeded, true},
		{context.Canceled, true},
		{loadshed.ErrOverloaded, false},
		{fmt.Errorf("wrapped: %w", loadshed.ErrOverloaded), false},
		{throttle.ErrThrottled, false},
		{throttledOnly{true}, false},
		{throttledOnly{false}, true},
		{buffer.ErrClosed, false},
		{errors.Join(errors.New("x"), buffer.ErrClosed), false},
	}
	for _, tt := range tests {
		if got := throttle.NotOverloaded("response", tt.err); got != tt.want {
			t.Errorf("NotOverloaded(%v): got %t, want %t", tt.err, got, tt.want)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { throttle.NotOverloaded(0, loadshed.ErrOverloaded) }); allocs != 0 {
		t.Errorf("NotOverloaded allocates %v times, want 0", allocs)
	}
}

// Bad input panics at construction, naming what is wrong.
func TestBadInputPanics(t *testing.T) {
	accept := throttle.NotOverloaded[string]
	inner := tower.ServiceFunc[string, string](func(context.Context, string) (string, error) { return "", nil })
	tests := []struct {
		name, want string
		f          func()
	}{
		{"NilInner", "throttle.New: nil inner service", func() { throttle.New[string, string](nil, accept) }},
		{"TypedNilInner", "throttle.New: nil inner service", func() {
			throttle.New[string, string]((*towertest.Mock[string, string])(nil), accept)
		}},
		{"NilServiceFunc", "throttle.New: nil inner service", func() { throttle.New(tower.ServiceFunc[string, string](nil), accept) }},
		{"NilClassifier", "throttle.New: nil accepted classifier", func() { throttle.New(inner, nil) }},
		{"NilOption", "throttle.New: option 1 is nil", func() { throttle.New(inner, accept, throttle.WithK(2), nil) }},
		{"LayerNilClassifier", "throttle.NewLayer: nil accepted classifier", func() { throttle.NewLayer[string, string](nil) }},
		{"LayerNilOption", "throttle.NewLayer: option 0 is nil", func() { throttle.NewLayer[string](accept, nil) }},
		{"LayerWrapNil", "throttle.New: nil inner service", func() { throttle.NewLayer[string](accept).Wrap(nil) }},
		{"KBelowOne", "throttle.WithK: k must be a finite number at least 1, got 0.999", func() { throttle.WithK(0.999) }},
		{"KZero", "throttle.WithK: k must be a finite number at least 1, got 0", func() { throttle.WithK(0) }},
		{"KNaN", "throttle.WithK: k must be a finite number at least 1, got NaN", func() { throttle.WithK(math.NaN()) }},
		{"KInf", "throttle.WithK: k must be a finite number at least 1, got +Inf", func() { throttle.WithK(math.Inf(1)) }},
		{"WindowZero", "throttle.WithWindow: d must be positive, got 0s", func() { throttle.WithWindow(0) }},
		{"WindowNegative", "throttle.WithWindow: d must be positive, got -1ns", func() { throttle.WithWindow(-1) }},
		{"MaxRejectionNegative", "throttle.WithMaxRejection: p must be between 0 and 1, got -0.1", func() { throttle.WithMaxRejection(-0.1) }},
		{"MaxRejectionAboveOne", "throttle.WithMaxRejection: p must be between 0 and 1, got 1.0000000000000002", func() {
			throttle.WithMaxRejection(math.Nextafter(1, 2))
		}},
		{"MaxRejectionNaN", "throttle.WithMaxRejection: p must be between 0 and 1, got NaN", func() { throttle.WithMaxRejection(math.NaN()) }},
		{"NilRand", "throttle.WithRand: nil Rand", func() { throttle.WithRand(nil) }},
		{"TypedNilRand", "throttle.WithRand: nil Rand", func() { throttle.WithRand((*script)(nil)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}

// The bounds themselves are allowed: K of 1, a window of 1ns, caps of 0
// and 1.
func TestBoundsAllowed(t *testing.T) {
	inner := tower.ServiceFunc[string, string](func(context.Context, string) (string, error) { return "", nil })
	throttle.New(inner, throttle.NotOverloaded[string], throttle.WithK(1), throttle.WithWindow(1),
		throttle.WithMaxRejection(0), throttle.WithMaxRejection(1))
}
