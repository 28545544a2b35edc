package timeout_test

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/timeout"
	"github.com/towergo/tower/towertest"
)

// farFuture is further away than any deadline a test waits for: a
// deadline beyond it never comes.
const farFuture = 200 * 365 * 24 * time.Hour

// The duration of every constructor at the ends of its range: refused with
// a clear panic when it is not positive, and, at math.MaxInt64, a Timeout
// that never fires (its deadline saturates rather than wrapping around into
// the past, which failed every call at once).
func TestDurationBounds(t *testing.T) {
	mock, _ := towertest.NewMock[string, string]()
	tests := []struct {
		name string
		d    time.Duration
		want string // the panic; "" for a Timeout that works
	}{
		{"MaxInt64", math.MaxInt64, ""},
		{"Zero", 0, "duration d must be positive, got 0s"},
		{"MinInt64", math.MinInt64, "duration d must be positive, got -2562047h47m16.854775808s"},
	}
	for _, tt := range tests {
		for _, m := range modes {
			t.Run(tt.name+"/"+m.name, func(t *testing.T) {
				if tt.want != "" {
					towertest.Panics(t, "timeout.New: "+tt.want, func() { timeout.New(mock, tt.d, m.opts...) })
					towertest.Panics(t, "timeout.NewLayer: "+tt.want, func() { timeout.NewLayer[string, string](tt.d, m.opts...) })
					return
				}
				neverFires(t, timeout.New(sleeper(time.Hour), tt.d, m.opts...))
				neverFires(t, timeout.NewLayer[string, string](tt.d, m.opts...).Wrap(sleeper(time.Hour)))
			})
		}
	}
}

// neverFires fails t unless svc, over an inner service that takes an hour,
// answers it.
func neverFires(t *testing.T, svc tower.Service[string, string]) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		res, err := tower.Call(t.Context(), svc, "hello")
		if got, want := (outcome{res, err, time.Since(start)}), (outcome{res: "hello", at: time.Hour}); got != want {
			t.Errorf("got %v, want %v", got, want)
		}
	})
}

// Under a Timeout of math.MaxInt64 the inner call's context behaves as
// one without a deadline would, save that it has one, far in the future:
// it does not end, a standard context or a Timeout derived from it
// expires on time, and the caller's own deadline still governs.
func TestHugeDurationContext(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := tower.ServiceFunc[string, string](func(ctx context.Context, req string) (string, error) {
					if d, ok := ctx.Deadline(); !ok || time.Until(d) < farFuture {
						t.Errorf("got deadline %v (%t), want one more than %v away", d, ok, farFuture)
					}
					if err := ctx.Err(); err != nil {
						t.Errorf("got Err %v, want nil", err)
					}
					std, cancel := context.WithTimeout(ctx, 100*ms)
					defer cancel()
					start := time.Now()
					<-std.Done()
					if at, err := time.Since(start), std.Err(); at != 100*ms || err != context.DeadlineExceeded {
						t.Errorf("a context derived with a timeout of 100ms: got %v at %v, want %v at 100ms", err, at, context.DeadlineExceeded)
					}
					return req, nil
				})
				svc := timeout.New(inner, math.MaxInt64, m.opts...)
				if _, err := tower.Call(t.Context(), svc, "hello"); err != nil {
					t.Errorf("got %v, want no error", err)
				}

				// A Timeout under it, and one over it, govern.
				for _, stack := range []tower.Service[string, string]{
					timeout.New(timeout.New(tower.ServiceFunc[string, string](honouring), 150*ms, m.opts...), math.MaxInt64, m.opts...),
					timeout.New(timeout.New(tower.ServiceFunc[string, string](honouring), math.MaxInt64, m.opts...), 150*ms, m.opts...),
				} {
					start := time.Now()
					res, err := tower.Call(t.Context(), stack, "hello")
					if got, want := (outcome{res, err, time.Since(start)}), (outcome{err: timeout.ErrElapsed, at: 150 * ms}); got != want {
						t.Errorf("nested Timeouts: got %v, want %v", got, want)
					}
				}

				// So does the caller's deadline, with a monotonic reading or
				// without, and a deadline centuries ahead is no deadline.
				for _, tt := range []struct {
					name string
					d    func() time.Time
					want outcome
				}{
					{"Monotonic", func() time.Time { return time.Now().Add(100 * ms) }, outcome{err: context.DeadlineExceeded, at: 100 * ms}},
					{"WallClock", func() time.Time { return time.Now().Add(100 * ms).Round(0) }, outcome{err: context.DeadlineExceeded, at: 100 * ms}},
					{"FarAhead", func() time.Time { return time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC) }, outcome{res: "hello", at: time.Second}},
				} {
					ctx, cancel := context.WithDeadline(t.Context(), tt.d())
					start := time.Now()
					res, err := tower.Call(ctx, timeout.New(tower.ServiceFunc[string, string](honouring), math.MaxInt64, m.opts...), "hello")
					cancel()
					if got := (outcome{res, err, time.Since(start)}); got != tt.want {
						t.Errorf("caller's deadline %s: got %v, want %v", tt.name, got, tt.want)
					}
				}
			})
		})
	}
}

// A caller's deadline long past, with no monotonic reading, has passed:
// the Timeout does not take it for one far ahead.
func TestCallerDeadlineLongPast(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithDeadline(t.Context(), time.Time{})
				defer cancel()
				start := time.Now()
				res, err := tower.Call(ctx, timeout.New(sleeper(300*ms), time.Second, m.opts...), "hello")
				want := outcome{err: context.DeadlineExceeded, at: 300 * ms} // as soon as the inner returns
				if m.name == "Abandon" {
					want.at = 0
				}
				if got := (outcome{res, err, time.Since(start)}); got != want {
					t.Errorf("got %v, want %v", got, want)
				}
				time.Sleep(time.Second) // let an abandoned inner call finish
			})
		})
	}
}

// Outside a synctest bubble the monotonic clock's readings are positive,
// and a Timeout of math.MaxInt64 added to one wrapped around into the
// past: every call failed at once. No timing is asserted, only that the
// call is not failed and its context has not ended.
func TestHugeDurationOnTheRealClock(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			inner := tower.ServiceFunc[string, string](func(ctx context.Context, req string) (string, error) {
				if d, ok := ctx.Deadline(); !ok || time.Until(d) < farFuture {
					t.Errorf("got deadline %v (%t), want one more than %v away", d, ok, farFuture)
				}
				return req, ctx.Err()
			})
			svc := timeout.New(inner, math.MaxInt64, m.opts...)
			if res, err := tower.Call(t.Context(), svc, "hello"); res != "hello" || err != nil {
				t.Errorf("got (%q, %v), want (%q, nil)", res, err, "hello")
			}
		})
	}
}
