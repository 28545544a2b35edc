package hedge_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// leg is the end of the Where of a PanicError of the hedge leg.
const leg = ", on the goroutine of a Hedge's hedge leg"

// errBoom is what the user code of these tests panics with.
var errBoom = errors.New("boom")

// ender ends the user code it is called in: with a panic, or with
// runtime.Goexit.
type ender func()

func panics() { panic(errBoom) }
func exits()  { runtime.Goexit() }

// endingPolicy is an Idempotent policy whose CanRetry runs end.
type endingPolicy struct {
	hedge.Idempotent[string]
	end ender
}

func (p endingPolicy) CanRetry(string) bool { p.end(); return true }

// endingBudget is a budget whose Withdraw runs end.
type endingBudget struct{ end ender }

func (endingBudget) Deposit()         {}
func (b endingBudget) Withdraw() bool { b.end(); return true }

// endingSink is a metrics sink whose Add runs end.
type endingSink struct{ end ender }

func (s endingSink) Add(metrics.Kind, int64)              { s.end() }
func (endingSink) Observe(time.Duration, metrics.Outcome) {}

// Each piece of user code the hedge leg runs, on a goroutine the Hedge
// started, panics or calls runtime.Goexit when the hedge is due, at 10ms,
// while the original waits. The program goes on: the leg's answer is a
// *tower.PanicError that names the code and carries the panic's value and
// stack, and it comes first, so the caller gets it, at 10ms, once the
// original has been cancelled. Nothing is left reserved.
func TestHedgeLegPanicIsItsAnswer(t *testing.T) {
	tests := []struct {
		name   string
		where  string
		end    ender
		opts   func(ender) []hedge.Option
		setup  func(*handle, ender)                                          // before the hedge is due
		hedge  func(*testing.T, *handle, *towertest.Request[string, string]) // once it is sent
		calls  int
		goexit bool // end is exits
	}{
		{name: "CanRetry/Panic", where: "the hedge policy's CanRetry", end: panics, calls: 1},
		{name: "CanRetry/Goexit", where: "the hedge policy's CanRetry", end: exits, calls: 1, goexit: true},
		{name: "Withdraw/Panic", where: "the budget's Withdraw", end: panics, calls: 1,
			opts: func(e ender) []hedge.Option { return []hedge.Option{hedge.WithBudget(endingBudget{e})} }},
		{name: "Withdraw/Goexit", where: "the budget's Withdraw", end: exits, calls: 1, goexit: true,
			opts: func(e ender) []hedge.Option { return []hedge.Option{hedge.WithBudget(endingBudget{e})} }},
		{name: "Ready/Panic", where: "the inner service's Ready", end: panics, calls: 1,
			setup: func(h *handle, _ ender) { h.PanicReady(errBoom) }},
		{name: "MetricsAdd/Panic", where: "the metrics sink's Add", end: panics, calls: 1,
			opts: func(e ender) []hedge.Option { return []hedge.Option{hedge.WithMetrics(endingSink{e})} }},
		{name: "MetricsAdd/Goexit", where: "the metrics sink's Add", end: exits, calls: 1, goexit: true,
			opts: func(e ender) []hedge.Option { return []hedge.Option{hedge.WithMetrics(endingSink{e})} }},
		{name: "Call/Panic", where: "the inner service's Call", end: panics, calls: 2,
			hedge: func(t *testing.T, h *handle, _ *towertest.Request[string, string]) {
				h.ExpectSettled(t, "req").Panic(errBoom)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := towertest.NewMock[string, string]()
				policy := hedge.Policy[string](hedge.Idempotent[string]{})
				if tt.opts == nil && tt.setup == nil && tt.hedge == nil {
					policy = endingPolicy{end: tt.end}
				}
				var opts []hedge.Option
				if tt.opts != nil {
					opts = tt.opts(tt.end)
				}
				svc := hedge.MockLatencies(hedge.New[string, string](mock, policy, 1, 0.5, time.Minute, opts...), 10)
				c := towertest.GoRequest(t.Context(), svc, "req")
				orig := h.ExpectSettled(t, "req")
				if tt.setup != nil {
					tt.setup(h, tt.end)
				}
				time.Sleep(10 * ms)
				if tt.hedge != nil {
					tt.hedge(t, h, orig)
				}
				_, err := c.Wait()
				c.ExpectElapsed(t, 10*ms)
				checkLegPanic(t, err, tt.where+leg, tt.goexit)
				cancelled(t, orig, "the original")
				h.ExpectIdle(t, tt.calls)
			})
		})
	}
}

// checkLegPanic fails t unless err is a *tower.PanicError of where, with
// a stack, whose value is errBoom, or says runtime.Goexit was called if
// goexit.
func checkLegPanic(t *testing.T, err error, where string, goexit bool) {
	t.Helper()
	var pe *tower.PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("got error %v, want a *tower.PanicError", err)
	}
	if pe.Where != where {
		t.Errorf("got Where %q, want %q", pe.Where, where)
	}
	if len(pe.Stack) == 0 {
		t.Error("the PanicError has no stack")
	}
	v, _ := pe.Value.(error)
	switch {
	case !goexit && v != errBoom:
		t.Errorf("got panic value %v, want %v", pe.Value, errBoom)
	case goexit && (v == nil || !strings.Contains(v.Error(), "runtime.Goexit was called")):
		t.Errorf("got panic value %v, want one that says runtime.Goexit was called", pe.Value)
	}
}

// The hedge leg's panic, or its runtime.Goexit, comes after the call's
// answer is settled: the original won at 20ms, and the hedge's Call, which
// ignores its cancelled context, ends at 30ms. The caller gets the
// original's response once the hedge has returned, and the panic, which
// no caller is left to hear of, is logged with its stack.
func TestHedgeLegLatePanicIsLogged(t *testing.T) {
	for _, tt := range []struct {
		name string
		end  ender
		says string
	}{
		{"Panic", panics, "panic=boom"},
		{"Goexit", exits, "runtime.Goexit was called"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			log := towertest.CaptureLog(t)
			synctest.Test(t, func(t *testing.T) {
				var n atomic.Int32
				inner := tower.ServiceFunc[string, string](func(context.Context, string) (string, error) {
					if n.Add(1) == 1 {
						time.Sleep(20 * ms)
						return "orig", nil
					}
					time.Sleep(20 * ms)
					tt.end()
					return "unreachable", nil
				})
				svc := hedge.MockLatencies(hedge.New[string, string](inner, hedge.Idempotent[string]{}, 1, 0.5, time.Minute), 10)
				c := towertest.GoRequest(t.Context(), svc, "req")
				c.ExpectValue(t, "orig")
				c.ExpectElapsed(t, 30*ms)
			})
			for _, want := range []string{"level=ERROR", `where="the inner service's Call` + leg + `"`, tt.says, "panic_test.go"} {
				if out := log.String(); !strings.Contains(out, want) {
					t.Errorf("the log lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// The hedge leg's panic won the race at 10ms, but the original, which
// ignores its cancelled context, then panics on the caller's goroutine at
// 20ms: the caller gets the original's panic, as it would without the
// Hedge, and the hedge's, which it does not hear of, is logged.
func TestHedgeLegPanicThenOriginalPanics(t *testing.T) {
	log := towertest.CaptureLog(t)
	synctest.Test(t, func(t *testing.T) {
		inner := tower.ServiceFunc[string, string](func(context.Context, string) (string, error) {
			time.Sleep(20 * ms)
			panic("original")
		})
		svc := hedge.MockLatencies(hedge.New[string, string](inner, endingPolicy{end: panics}, 1, 0.5, time.Minute), 10)
		var got any
		func() {
			defer func() { got = recover() }()
			tower.Call(t.Context(), svc, "req")
		}()
		if got != "original" {
			t.Errorf("got panic %v, want %q", got, "original")
		}
	})
	for _, want := range []string{`where="the hedge policy's CanRetry` + leg + `"`, "panic=boom"} {
		if out := log.String(); !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
}

// clonePanics is an Idempotent policy whose Clone panics.
type clonePanics struct{ hedge.Idempotent[string] }

func (clonePanics) Clone(string) (string, bool) { panic(errBoom) }

// depositPanics is a budget whose Deposit panics.
type depositPanics struct{}

func (depositPanics) Deposit()       { panic(errBoom) }
func (depositPanics) Withdraw() bool { return true }

// The budget's Deposit and the policy's Clone run on the caller's
// goroutine, before the original is sent: a panic there goes on up to the
// caller, with nothing sent and the inner permit given back.
func TestHedgeCallerPanicReleasesPermit(t *testing.T) {
	for _, tt := range []struct {
		name   string
		policy hedge.Policy[string]
		opts   []hedge.Option
	}{
		{"Clone", clonePanics{}, nil},
		{"Deposit", hedge.Idempotent[string]{}, []hedge.Option{hedge.WithBudget(depositPanics{})}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := towertest.NewMock[string, string]()
				h.Allow(1)
				svc := hedge.New[string, string](mock, tt.policy, 1, 0.5, time.Minute, tt.opts...)
				p := towertest.MustReady(t, svc)
				towertest.Panics(t, "boom", func() { p.Call(t.Context(), "req") })
				h.ExpectIdle(t, 0)
				p, ok := towertest.ReadyNow(t, svc)
				if !ok {
					t.Fatal("ReadyNow after the panic: not ready, want the inner permit back")
				}
				p.Release()
			})
		})
	}
}
