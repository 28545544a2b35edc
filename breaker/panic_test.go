package breaker_test

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/breaker"
	"github.com/towergo/tower/towertest"
)

// panicky is a backend whose call panics for request 0.
var panicky = tower.ServiceFunc[int, int](func(ctx context.Context, req int) (int, error) {
	if req == 0 {
		panic("inner call")
	}
	return backend(ctx, req)
})

// An inner call that panics counts as a failure, and the panic reaches
// the caller: closed, it trips; a probe that panics opens the breaker
// again.
func TestInnerCallPanicIsFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := breaker.New(panicky, breaker.AnyError, breaker.WithConsecutiveFailures(1), breaker.WithJitter(0),
			breaker.WithOpenDelay(time.Second, time.Minute))
		mustPanic(t, "inner call", func() { send(t, b, 0) })
		expectState(t, b, breaker.Open)
		time.Sleep(time.Second)
		mustPanic(t, "inner call", func() { send(t, b, 0) })
		expectState(t, b, breaker.Open)
		if got, p := openFor(t, b); got != 2*time.Second {
			t.Errorf("delay %v, want 2s", got)
		} else {
			p.Release()
		}
	})
}

// A classifier that panics records nothing, gives the probe's place back,
// and its panic reaches the caller.
func TestClassifierPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		classify := func(_ int, err error) bool {
			if err == nil {
				panic("classifier")
			}
			return true
		}
		b := breaker.New(backend, classify, breaker.WithConsecutiveFailures(2), breaker.WithJitter(0),
			breaker.WithOpenDelay(time.Second, time.Minute))
		send(t, b, bad)
		mustPanic(t, "classifier", func() { send(t, b, ok) })
		send(t, b, bad) // the panic reset nothing: the second failure in a row
		expectState(t, b, breaker.Open)
		time.Sleep(time.Second)
		mustPanic(t, "classifier", func() { send(t, b, ok) })
		expectState(t, b, breaker.HalfOpen)
		send(t, b, bad) // the place was given back
		expectState(t, b, breaker.Open)
	})
}

// An inner Ready that panics for a probe gives its place back, and the
// panic reaches the caller.
func TestInnerReadyPanicGivesProbeBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[int, int]()
		b := breaker.New(m, breaker.AnyError, breaker.WithConsecutiveFailures(1), breaker.WithJitter(0),
			breaker.WithOpenDelay(time.Second, time.Minute))
		c := towertest.GoRequest(t.Context(), b, bad)
		h.ExpectSettled(t, bad).Fail(errBoom)
		c.ExpectError(t, errBoom)
		time.Sleep(time.Second)
		h.PanicReady("inner ready")
		mustPanic(t, "inner ready", func() { b.Ready(t.Context()) })
		expectState(t, b, breaker.HalfOpen)
		p := readyNow(t, b)
		p.Release()
		h.ExpectIdle(t, 1)
	})
}

// A random source that panics as the breaker trips: the panic reaches the
// caller, the breaker stays closed, and the next failure trips it.
func TestRandomPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		panics := true
		b := breaker.New(backend, breaker.AnyError, breaker.WithConsecutiveFailures(2), breaker.WithJitter(0),
			breaker.WithOpenDelay(time.Second, time.Minute), breaker.WithRandom(func() float64 {
				if panics {
					panics = false
					panic("random")
				}
				return 0
			}))
		send(t, b, bad)
		mustPanic(t, "random", func() { send(t, b, bad) })
		expectState(t, b, breaker.Closed)
		send(t, b, bad)
		expectState(t, b, breaker.Open)
	})
}

// panickyBudget panics on Withdraw while armed.
type panickyBudget struct{ budget }

func (b *panickyBudget) Withdraw() bool {
	if b.left < 0 {
		b.left = 0
		panic("budget")
	}
	return b.budget.Withdraw()
}

// A budget that panics: the panic reaches the caller of Ready, which
// holds nothing; the breaker stays open, and lets the next probe through
// once the budget grants it.
func TestBudgetPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bud := &panickyBudget{budget{left: -1}}
		b := newBreaker(breaker.WithConsecutiveFailures(1), breaker.WithBudget(bud))
		send(t, b, bad)
		time.Sleep(time.Second)
		mustPanic(t, "budget", func() { b.Ready(t.Context()) })
		expectState(t, b, breaker.Open)
		bud.set(1)
		send(t, b, ok)
		expectState(t, b, breaker.Closed)
	})
}

// Bad input panics at construction, naming the parameter.
func TestBadInput(t *testing.T) {
	var nilService *towertest.Mock[int, int]
	for _, tt := range []struct {
		want string
		f    func()
	}{
		{"breaker.New: nil inner service", func() { breaker.New[int, int](nil, breaker.AnyError) }},
		{"breaker.New: nil inner service", func() { breaker.New[int, int](nilService, breaker.AnyError) }},
		{"breaker.New: nil failure classifier", func() { breaker.New[int, int](backend, nil) }},
		{"breaker.NewLayer: nil failure classifier", func() { breaker.NewLayer[int, int](nil) }},
		{"breaker.NewLayer: nil inner service", func() { breaker.NewLayer[int, int](breaker.AnyError).Wrap(nilService) }},
		{"breaker.New: option 1 is nil", func() { breaker.New(backend, breaker.AnyError, breaker.WithProbes(1), nil) }},
		{"breaker.NewLayer: option 0 is nil", func() { breaker.NewLayer[int, int](breaker.AnyError, nil) }},
		{"breaker.WithConsecutiveFailures: n must be at least 1, got 0", func() { breaker.WithConsecutiveFailures(0) }},
		{"breaker.LastCalls: n must be at least 1, got 0", func() { breaker.LastCalls(0) }},
		{"breaker.LastDuration: d must be positive, got 0s", func() { breaker.LastDuration(0) }},
		{"breaker.LastDuration: d must be positive, got -1ns", func() { breaker.LastDuration(-1) }},
		{"breaker.WithFailureRatio: ratio must be between 0 and 1, got -0.1", func() { breaker.WithFailureRatio(-0.1, 1, breaker.LastCalls(1)) }},
		{"breaker.WithFailureRatio: ratio must be between 0 and 1, got 1.5", func() { breaker.WithFailureRatio(1.5, 1, breaker.LastCalls(1)) }},
		{"breaker.WithFailureRatio: ratio must be between 0 and 1, got NaN", func() { breaker.WithFailureRatio(math.NaN(), 1, breaker.LastCalls(1)) }},
		{"breaker.WithFailureRatio: minCalls must be at least 1, got 0", func() { breaker.WithFailureRatio(0.5, 0, breaker.LastCalls(1)) }},
		{"breaker.WithFailureRatio: minCalls must be at most the window's 4 calls, got 5", func() { breaker.WithFailureRatio(0.5, 5, breaker.LastCalls(4)) }},
		{"breaker.WithFailureRatio: w is the zero Window", func() { breaker.WithFailureRatio(0.5, 1, breaker.Window{}) }},
		{"breaker.WithOpenDelay: base must be positive, got 0s", func() { breaker.WithOpenDelay(0, time.Second) }},
		{"breaker.WithOpenDelay: max must not be less than base, got base 2s and max 1s", func() { breaker.WithOpenDelay(2*time.Second, time.Second) }},
		{"breaker.WithJitter: fraction must be between 0 and 1, got -0.5", func() { breaker.WithJitter(-0.5) }},
		{"breaker.WithJitter: fraction must be between 0 and 1, got 1.01", func() { breaker.WithJitter(1.01) }},
		{"breaker.WithRandom: nil random", func() { breaker.WithRandom(nil) }},
		{"breaker.WithProbes: n must be at least 1, got 0", func() { breaker.WithProbes(0) }},
		{"breaker.WithSuccesses: n must be at least 1, got -1", func() { breaker.WithSuccesses(-1) }},
	} {
		mustPanic(t, tt.want, tt.f)
	}
}

// The bounds themselves are good input.
func TestBoundsAccepted(t *testing.T) {
	breaker.WithFailureRatio(0, 1, breaker.LastCalls(1))
	breaker.WithFailureRatio(1, 4, breaker.LastCalls(4))
	breaker.WithFailureRatio(1, 1000, breaker.LastDuration(1))
	breaker.WithOpenDelay(1, 1)
	breaker.WithJitter(0)
	breaker.WithJitter(1)
	breaker.WithConsecutiveFailures(1)
	breaker.LastCalls(1)
	breaker.WithProbes(1)
	breaker.WithSuccesses(1)
}
