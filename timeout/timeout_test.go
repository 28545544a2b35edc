package timeout_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/stack"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towertest"
)

const ms = time.Millisecond

// modes are the configurations every behaviour test runs in.
var modes = []struct {
	name string
	opts []timeout.Option
}{
	{"Cooperative", nil}, // the default
	{"Abandon", []timeout.Option{timeout.WithMode(timeout.Abandon)}},
}

// outcome is what one caller got, and when, measured from the bubble's
// start.
type outcome struct {
	res string
	err error
	at  time.Duration
}

func (o outcome) String() string { return fmt.Sprintf("(%q, %v) at %v", o.res, o.err, o.at) }

// callAt runs tower.Call on its own goroutine and returns a function that
// waits for what it got.
func callAt(ctx context.Context, start time.Time, svc tower.Service[string, string], req string) func() outcome {
	call := towertest.Go(func() (string, error) { return tower.Call(ctx, svc, req) })
	return func() outcome {
		res, err := call.Wait()
		return outcome{res: res, err: err, at: call.Since(start)}
	}
}

// sleeper is an inner service that ignores its context: it takes d, then
// answers with its request.
func sleeper(d time.Duration) tower.ServiceFunc[string, string] {
	return func(_ context.Context, req string) (string, error) {
		time.Sleep(d)
		return req, nil
	}
}

func TestConformance(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			towertest.LayerSuite[string, string]{
				NewLayer: func() tower.Layer[string, string] {
					return timeout.NewLayer[string, string](time.Second, m.opts...)
				},
				Request:  "hello",
				Response: "world",
			}.Run(t)
		})
	}
}

// The clock starts in Call, never in Ready: a caller that waits 500ms for
// the inner service to become ready, then gets its answer 100ms into the
// call, is well within a timeout of 150ms.
func TestClockStartsInCallNotReady(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := towertest.NewMock[string, string]()
				h.Allow(0)
				svc := timeout.New(mock, 150*ms, m.opts...)
				start := time.Now()
				wait := callAt(t.Context(), start, svc, "hello")

				time.Sleep(500 * ms)
				synctest.Wait()
				if n := h.Calls(); n != 0 {
					t.Fatalf("got %d calls while the inner service was not ready, want 0", n)
				}
				h.Allow(1)
				r := h.ExpectSettled(t, "hello") // once ready
				time.Sleep(100 * ms)
				r.Respond("world")

				want := outcome{res: "world", at: 600 * ms}
				if got := wait(); got != want {
					t.Errorf("got %v, want %v", got, want)
				}
			})
		})
	}
}

// At the deadline the inner call's context is cancelled, and the caller
// gets ErrElapsed at exactly the deadline.
func TestDeadlineCancelsInnerAndElapses(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := towertest.NewMock[string, string]() // honours ctx
				svc := timeout.New(mock, 150*ms, m.opts...)
				start := time.Now()
				wait := callAt(t.Context(), start, svc, "hello")
				r := h.ExpectSettled(t, "hello")
				if d, ok := r.Context().Deadline(); !ok || !d.Equal(start.Add(150*ms)) {
					t.Errorf("got inner deadline %v (%t), want %v", d, ok, start.Add(150*ms))
				}

				got := wait()
				if want := (outcome{err: timeout.ErrElapsed, at: 150 * ms}); got != want {
					t.Errorf("got %v, want %v", got, want)
				}
				if msg := got.err.Error(); msg != "request timed out" {
					t.Errorf("got message %q, want %q", msg, "request timed out")
				}
				if !errors.Is(got.err, timeout.ErrElapsed) {
					t.Errorf("errors.Is(%v, ErrElapsed) = false, want true", got.err)
				}
				if errors.Is(got.err, context.DeadlineExceeded) {
					t.Errorf("errors.Is(%v, context.DeadlineExceeded) = true, want false", got.err)
				}
				if err := r.Context().Err(); err != context.DeadlineExceeded {
					t.Errorf("got inner context error %v, want %v", err, context.DeadlineExceeded)
				}
				if cause := context.Cause(r.Context()); cause != timeout.ErrElapsed {
					t.Errorf("got inner context cause %v, want %v", cause, timeout.ErrElapsed)
				}
			})
		})
	}
}

func TestErrElapsedIsATimeout(t *testing.T) {
	var te interface{ Timeout() bool }
	if !errors.As(timeout.ErrElapsed, &te) || !te.Timeout() {
		t.Errorf("ErrElapsed has no Timeout method that reports true")
	}
}

// wrapLayer is middleware that wraps every error it sees in "name: %w".
func wrapLayer(name string) tower.Layer[string, string] {
	return tower.LayerFunc[string, string](func(inner tower.Service[string, string]) tower.Service[string, string] {
		return tower.ServiceFunc[string, string](func(ctx context.Context, req string) (string, error) {
			res, err := tower.Call(ctx, inner, req)
			if err != nil {
				return res, fmt.Errorf("%s: %w", name, err)
			}
			return res, nil
		})
	})
}

// ErrElapsed stays visible to errors.Is through layers that wrap it.
func TestErrElapsedThroughWrappingLayers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, _ := towertest.NewMock[string, string]()
		svc := stack.New[string, string]().
			Layer(wrapLayer("outer")).
			Layer(wrapLayer("middle")).
			Layer(timeout.NewLayer[string, string](150 * ms)).
			Layer(wrapLayer("inner")).
			Service(mock)
		start := time.Now()
		_, err := tower.Call(t.Context(), svc, "hello")
		if at := time.Since(start); at != 150*ms {
			t.Errorf("got error at %v, want 150ms", at)
		}
		if want := "outer: middle: request timed out"; err == nil || err.Error() != want {
			t.Fatalf("got error %v, want %q", err, want)
		}
		if !errors.Is(err, timeout.ErrElapsed) {
			t.Errorf("errors.Is(%v, ErrElapsed) = false, want true", err)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("errors.Is(%v, context.DeadlineExceeded) = true, want false", err)
		}
	})
}

// An inner call's own error, before the deadline, reaches the caller
// unchanged.
func TestInnerErrorPassesThrough(t *testing.T) {
	boom := errors.New("boom")
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := towertest.NewMock[string, string]()
				svc := timeout.New(mock, 150*ms, m.opts...)
				start := time.Now()
				wait := callAt(t.Context(), start, svc, "hello")
				time.Sleep(50 * ms)
				h.Expect(t, "hello").Fail(boom)
				if got, want := wait(), (outcome{err: boom, at: 50 * ms}); got != want {
					t.Errorf("got %v, want %v", got, want)
				}
			})
		})
	}
}

// The inner service's readiness error comes back from Ready unchanged.
func TestInnerReadyErrorPassesThrough(t *testing.T) {
	broken := errors.New("broken")
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := towertest.NewMock[string, string]()
				h.FailReady(broken)
				svc := timeout.New(mock, 150*ms, m.opts...)
				p, err := svc.Ready(t.Context())
				if err != broken {
					t.Errorf("got Ready error %v, want %v", err, broken)
				}
				if p.Held() {
					t.Error("Ready failed and returned a permit that holds something")
				}
				if n := h.Calls(); n != 0 {
					t.Errorf("got %d calls, want 0", n)
				}
			})
		})
	}
}

func TestBadInputPanics(t *testing.T) {
	mock, _ := towertest.NewMock[string, string]()
	tests := []struct {
		name string
		f    func()
		want string
	}{
		{"New nil inner", func() { timeout.New[string, string](nil, time.Second) },
			"timeout.New: nil inner service"},
		{"New typed nil inner", func() { timeout.New[string, string]((*towertest.Mock[string, string])(nil), time.Second) },
			"timeout.New: nil inner service"},
		{"New nil ServiceFunc", func() { timeout.New[string, string](tower.ServiceFunc[string, string](nil), time.Second) },
			"timeout.New: nil inner service"},
		{"NewLayer typed nil inner", func() {
			timeout.NewLayer[string, string](time.Second).Wrap((*towertest.Mock[string, string])(nil))
		}, "timeout.New: nil inner service"},
		{"New zero d", func() { timeout.New(mock, 0) },
			"timeout.New: duration d must be positive, got 0s"},
		{"New negative d", func() { timeout.New(mock, -time.Second) },
			"timeout.New: duration d must be positive, got -1s"},
		{"New nil option", func() { timeout.New(mock, time.Second, nil) },
			"timeout.New: option 0 is nil"},
		{"NewLayer zero d", func() { timeout.NewLayer[string, string](0) },
			"timeout.NewLayer: duration d must be positive, got 0s"},
		{"NewLayer negative d", func() { timeout.NewLayer[string, string](-ms) },
			"timeout.NewLayer: duration d must be positive, got -1ms"},
		{"NewLayer nil option", func() { timeout.NewLayer[string, string](time.Second, timeout.WithMode(timeout.Abandon), nil) },
			"timeout.NewLayer: option 1 is nil"},
		{"WithMode unknown", func() { timeout.WithMode(timeout.Mode(7)) },
			"timeout.WithMode: unknown mode Mode(7)"},
		{"WithMode negative", func() { timeout.WithMode(timeout.Mode(-1)) },
			"timeout.WithMode: unknown mode Mode(-1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil {
					t.Fatalf("did not panic, want panic %q", tt.want)
				}
				if got := fmt.Sprint(r); got != tt.want {
					t.Errorf("got panic %q, want %q", got, tt.want)
				}
			}()
			tt.f()
		})
	}
}

func TestModeString(t *testing.T) {
	tests := []struct {
		m    timeout.Mode
		want string
	}{
		{timeout.Cooperative, "Cooperative"},
		{timeout.Abandon, "Abandon"},
		{timeout.Mode(7), "Mode(7)"},
	}
	for _, tt := range tests {
		if got := tt.m.String(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// An inner service that returns an empty permit without an error breaks
// the contract; the Timeout passes the empty permit on, whose Release does
// nothing and whose Call panics with the contract's message.
func TestEmptyInnerPermitPassedOn(t *testing.T) {
	broken := brokenReady{}
	to := timeout.New[string, string](broken, time.Second)
	p, err := to.Ready(t.Context())
	if err != nil || p.Held() {
		t.Fatalf("got %v, held=%v; want the empty permit and no error", err, p.Held())
	}
	p.Release()
	defer func() {
		if msg := fmt.Sprint(recover()); !strings.HasPrefix(msg, "tower:") {
			t.Errorf("got panic %q, want one starting tower:", msg)
		}
	}()
	p.Call(t.Context(), "hello")
}

// brokenReady returns an empty permit and no error.
type brokenReady struct{}

func (brokenReady) Ready(context.Context) (tower.Permit[string, string], error) {
	return tower.Permit[string, string]{}, nil
}

// Outside a synctest bubble a caller's deadline carries a monotonic
// reading, which the Timeout compares with its own without reading the
// clock again. Whichever deadline comes first governs: the inner call gets
// the caller's context itself when it is the caller's. No timing is
// asserted, only which context the inner call sees.
func TestCallerDeadlineOnTheMonotonicClock(t *testing.T) {
	for _, tt := range []struct {
		name            string
		caller, timeout time.Duration
		callers         bool
	}{
		{"CallerFirst", time.Second, time.Hour, true},
		{"TimeoutFirst", time.Hour, time.Second, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var seen context.Context
			inner := tower.ServiceFunc[string, string](func(ctx context.Context, req string) (string, error) {
				seen = ctx
				return req, nil
			})
			ctx, cancel := context.WithTimeout(t.Context(), tt.caller)
			defer cancel()
			if _, err := tower.Call(ctx, timeout.New(inner, tt.timeout), "hello"); err != nil {
				t.Fatal(err)
			}
			if got := seen == ctx; got != tt.callers {
				t.Errorf("the inner call got the caller's context: %v, want %v", got, tt.callers)
			}
		})
	}
}
