package load_test

import (
	"math"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/load"
	"github.com/towergo/tower/towertest"
)

// doneAtOnce is a Completion that completes each request when it returns,
// as the default does, through the Handle path.
type doneAtOnce struct{}

func (doneAtOnce) Track(h *load.Handle, res string) string {
	h.Done()
	return res
}

func TestConformance(t *testing.T) {
	for _, tt := range []struct {
		name  string
		layer func() tower.Layer[string, string]
	}{
		{"Constant", func() tower.Layer[string, string] { return load.NewConstantLayer[string, string](1) }},
		{"PendingRequests", func() tower.Layer[string, string] { return load.NewPendingRequestsLayer[string, string]() }},
		{"PendingRequestsWithCompletion", func() tower.Layer[string, string] {
			return load.NewPendingRequestsLayer[string, string](load.WithCompletion[string](doneAtOnce{}))
		}},
		{"PeakEwma", func() tower.Layer[string, string] {
			return load.NewPeakEwmaLayer[string, string](30*time.Millisecond, 10*time.Second)
		}},
		{"PeakEwmaWithCompletion", func() tower.Layer[string, string] {
			return load.NewPeakEwmaLayer[string, string](30*time.Millisecond, 10*time.Second, load.WithCompletion[string](doneAtOnce{}))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{NewLayer: tt.layer, Request: "hello", Response: "world"}.Run(t)
		})
	}
}

// typedCompletion is a Completion with a pointer receiver, for a typed nil.
type typedCompletion struct{}

func (*typedCompletion) Track(h *load.Handle, res string) string { return res }

func TestBadInputPanics(t *testing.T) {
	var nilOpt load.Option[string]
	for _, tt := range []struct {
		name string
		f    func()
		want string
	}{
		{"NewConstantNilInner", func() { load.NewConstant[string, string](nil, 1) }, "load.NewConstant: inner is nil"},
		{"NewConstantNaN", func() { load.NewConstant[string, string](echo, math.NaN()) }, "load.NewConstant: load is NaN"},
		{"NewConstantLayerNaN", func() { load.NewConstantLayer[string, string](math.NaN()) }, "load.NewConstantLayer: load is NaN"},
		{"NewPendingRequestsNilInner", func() { load.NewPendingRequests[string, string](nil) }, "load.NewPendingRequests: inner is nil"},
		{"NewPendingRequestsNilOption", func() { load.NewPendingRequests[string, string](echo, nilOpt) }, "load.NewPendingRequests: option 0 is nil"},
		{"NewPendingRequestsLayerNilOption", func() { load.NewPendingRequestsLayer[string, string](nilOpt) }, "load.NewPendingRequestsLayer: option 0 is nil"},
		{"WithCompletionNil", func() { load.WithCompletion[string](nil) }, "load.WithCompletion: nil Completion"},
		{"WithCompletionTypedNil", func() { load.WithCompletion[string]((*typedCompletion)(nil)) }, "load.WithCompletion: nil Completion"},
		{"NewConstantTypedNilInner", func() { load.NewConstant[string, string]((*towertest.Mock[string, string])(nil), 1) }, "load.NewConstant: inner is nil"},
		{"NewPendingRequestsTypedNilInner", func() { load.NewPendingRequests[string, string]((*towertest.Mock[string, string])(nil)) }, "load.NewPendingRequests: inner is nil"},
		{"NewPeakEwmaTypedNilInner", func() {
			load.NewPeakEwma[string, string]((*towertest.Mock[string, string])(nil), time.Millisecond, time.Second)
		}, "load.NewPeakEwma: inner is nil"},
		{"NewPeakEwmaNilInner", func() { load.NewPeakEwma[string, string](nil, time.Millisecond, time.Second) }, "load.NewPeakEwma: inner is nil"},
		{"NewPeakEwmaZeroRTT", func() { load.NewPeakEwma[string, string](echo, 0, time.Second) }, "load.NewPeakEwma: defaultRTT must be positive, got 0s"},
		{"NewPeakEwmaNegativeRTT", func() { load.NewPeakEwma[string, string](echo, -time.Millisecond, time.Second) }, "load.NewPeakEwma: defaultRTT must be positive, got -1ms"},
		{"NewPeakEwmaZeroDecay", func() { load.NewPeakEwma[string, string](echo, time.Millisecond, 0) }, "load.NewPeakEwma: decay must be positive, got 0s"},
		{"NewPeakEwmaNegativeDecay", func() { load.NewPeakEwma[string, string](echo, time.Millisecond, -time.Second) }, "load.NewPeakEwma: decay must be positive, got -1s"},
		{"NewPeakEwmaNilOption", func() { load.NewPeakEwma[string, string](echo, time.Millisecond, time.Second, nilOpt) }, "load.NewPeakEwma: option 0 is nil"},
		{"NewPeakEwmaLayerZeroDecay", func() { load.NewPeakEwmaLayer[string, string](time.Millisecond, 0) }, "load.NewPeakEwmaLayer: decay must be positive, got 0s"},
		{"NewPeakEwmaLayerNilOption", func() { load.NewPeakEwmaLayer[string, string](time.Millisecond, time.Second, nilOpt) }, "load.NewPeakEwmaLayer: option 0 is nil"},
	} {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}
