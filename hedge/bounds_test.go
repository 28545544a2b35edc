package hedge_test

import (
	"fmt"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/retry"
	"github.com/towergo/tower/towertest"
)

// Every count and duration New and NewLayer take, at the ends of its range
// and at 0: refused with a clear panic, or a Hedge that works.
func TestParameterBounds(t *testing.T) {
	mock, _ := towertest.NewMock[string, string]()
	pol := hedge.Idempotent[string]{}
	type args struct {
		minPoints  int
		percentile float64
		period     time.Duration
	}
	for _, tt := range []struct {
		name string
		a    args
		want string // the panic, after the function's name; "" for none
	}{
		{"minDataPoints/MaxInt64", args{math.MaxInt64, 0.9, time.Second}, ""},
		{"minDataPoints/MinInt64", args{math.MinInt64, 0.9, time.Second}, "minDataPoints must not be negative, got -9223372036854775808"},
		{"minDataPoints/Zero", args{0, 0.9, time.Second}, ""},
		{"percentile/MaxInt64", args{1, math.MaxInt64, time.Second}, "percentile must be between 0 and 1, got 9.223372036854776e+18"},
		{"percentile/MinInt64", args{1, math.MinInt64, time.Second}, "percentile must be between 0 and 1, got -9.223372036854776e+18"},
		{"percentile/Zero", args{1, 0, time.Second}, ""},
		{"percentile/One", args{1, 1, time.Second}, ""},
		{"period/MaxInt64", args{1, 0.9, math.MaxInt64}, ""},
		{"period/MinInt64", args{1, 0.9, math.MinInt64}, "period must be positive, got -2562047h47m16.854775808s"},
		{"period/Zero", args{1, 0.9, 0}, "period must be positive, got 0s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.a
			newHedge := func() { hedge.New[string, string](mock, pol, a.minPoints, a.percentile, a.period) }
			newLayer := func() { hedge.NewLayer[string, string](pol, a.minPoints, a.percentile, a.period) }
			if tt.want == "" {
				newHedge()
				newLayer()
				return
			}
			towertest.Panics(t, "hedge.New: "+tt.want, newHedge)
			towertest.Panics(t, "hedge.NewLayer: "+tt.want, newLayer)
		})
	}
}

// A Hedge at the largest counts and durations works, without overflow:
// with minDataPoints of math.MaxInt64 no hedge is ever sent, and with a
// period of math.MaxInt64 the histograms never rotate, so the latencies
// read stay those of the first period, here preloaded, two centuries on.
func TestHugeParameters(t *testing.T) {
	for _, tt := range []struct {
		name      string
		minPoints int
		period    time.Duration
		hedged    bool
	}{
		{"minDataPoints", math.MaxInt64, time.Minute, false},
		{"period", 1, math.MaxInt64, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := towertest.NewMock[string, string]()
				svc := hedge.MockLatencies(hedge.New[string, string](mock, hedge.Idempotent[string]{}, tt.minPoints, 0.5, tt.period), 10)
				time.Sleep(200 * 365 * 24 * time.Hour)
				c := towertest.GoRequest(t.Context(), svc, "req")
				orig := h.ExpectSettled(t, "req")
				time.Sleep(10 * ms)
				synctest.Wait()
				if r, ok := h.TryNext(); ok != tt.hedged {
					t.Fatalf("a hedge was sent at 10ms: %t, want %t", ok, tt.hedged)
				} else if ok {
					r.Respond("hedge")
					c.ExpectValue(t, "hedge")
					c.ExpectElapsed(t, 10*ms)
					cancelled(t, orig, "the original")
					return
				}
				orig.Respond("orig")
				c.ExpectValue(t, "orig")
				c.ExpectElapsed(t, 10*ms)
			})
		})
	}
}

// Typed nils are refused where nil is; a typed nil budget too, which is
// more likely a budget not yet built than a wish for none (nil).
func TestTypedNilPanics(t *testing.T) {
	mock, _ := towertest.NewMock[string, string]()
	pol := hedge.Idempotent[string]{}
	for _, tt := range []struct {
		name string
		f    func()
		want string
	}{
		{"NewInner", func() { hedge.New[string, string]((*towertest.Mock[string, string])(nil), pol, 1, 0.9, time.Second) }, "hedge.New: nil inner service"},
		{"NewInnerServiceFunc", func() { hedge.New[string, string](tower.ServiceFunc[string, string](nil), pol, 1, 0.9, time.Second) }, "hedge.New: nil inner service"},
		{"NewPolicy", func() { hedge.New[string, string](mock, (*testPolicy)(nil), 1, 0.9, time.Second) }, "hedge.New: nil policy"},
		{"NewLayerPolicy", func() { hedge.NewLayer[string, string]((*testPolicy)(nil), 1, 0.9, time.Second) }, "hedge.NewLayer: nil policy"},
		{"NewLayerInner", func() {
			hedge.NewLayer[string, string](pol, 1, 0.9, time.Second).Wrap((*towertest.Mock[string, string])(nil))
		}, "hedge.New: nil inner service"},
		{"WithBudget", func() { hedge.WithBudget((*retry.TPSBudget)(nil)) }, fmt.Sprintf("hedge.WithBudget: b is a nil %T; pass nil for no budget", (*retry.TPSBudget)(nil))},
	} {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
	hedge.WithBudget(nil) // no budget: valid
}
