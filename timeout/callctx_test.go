package timeout

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/mono"
	"github.com/towergo/tower/retry"
)

// callWith runs one call through a Timeout of d over inner and returns the
// context the inner call got, with the call's outcome.
func callWith(t *testing.T, ctx context.Context, d time.Duration, inner func(ctx context.Context) error) (*call[int, int], error) {
	t.Helper()
	var got *call[int, int]
	svc := New(tower.ServiceFunc[int, int](func(ctx context.Context, req int) (int, error) {
		got, _ = ctx.(*call[int, int])
		return req, inner(ctx)
	}), d)
	_, err := tower.Call(ctx, svc, 1)
	if got == nil {
		t.Fatal("the inner call did not get the Timeout's own context")
	}
	return got, err
}

type key struct{}

// An inner call that never waits on its context builds nothing: no standard
// context, so no timer.
func TestCallContextIsLazy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.WithValue(t.Context(), key{}, "v")
		c, err := callWith(t, ctx, time.Second, func(ctx context.Context) error {
			if v := ctx.Value(key{}); v != "v" {
				t.Errorf("Value: got %v, want %q", v, "v")
			}
			if err := ctx.Err(); err != nil {
				t.Errorf("Err during the call: got %v, want nil", err)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Call: %v", err)
		}
		if c.has(stdBuilt) {
			t.Error("the call built a standard context although nothing waited on it")
		}
		// Kept after the call, the context is cancelled, as a standard one
		// would be once its cancel function ran.
		if err := c.Err(); err != context.Canceled {
			t.Errorf("Err after the call: got %v, want %v", err, context.Canceled)
		}
		select {
		case <-c.Done():
		default:
			t.Error("Done after the call is not closed")
		}
	})
}

// The deadline is the call's start plus the timeout, the same every time it
// is asked for.
func TestCallContextDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		want := time.Now().Add(150 * time.Millisecond)
		callWith(t, t.Context(), 150*time.Millisecond, func(ctx context.Context) error {
			time.Sleep(40 * time.Millisecond)
			for range 3 {
				d, ok := ctx.Deadline()
				if !ok || !d.Equal(want) {
					t.Errorf("Deadline: got %v, %v; want %v, true", d, ok, want)
				}
			}
			return nil
		})
	})
}

// At the deadline, with nothing built, Err reports it from the clock, and
// context.Cause then finds ErrElapsed.
func TestCallContextErrAtDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, err := callWith(t, t.Context(), 100*time.Millisecond, func(ctx context.Context) error {
			time.Sleep(100 * time.Millisecond) // not looking at ctx
			if err := ctx.Err(); err != context.DeadlineExceeded {
				t.Errorf("Err at the deadline: got %v, want %v", err, context.DeadlineExceeded)
			}
			if cause := context.Cause(ctx); cause != ErrElapsed {
				t.Errorf("Cause at the deadline: got %v, want %v", cause, ErrElapsed)
			}
			return ctx.Err()
		})
		if err != ErrElapsed {
			t.Errorf("Call: got %v, want %v", err, ErrElapsed)
		}
	})
}

// A context derived inside the call is cancelled at the call's deadline,
// and its own shorter deadline still applies.
func TestCallContextDerived(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		_, err := callWith(t, t.Context(), 100*time.Millisecond, func(ctx context.Context) error {
			short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
			<-short.Done()
			cancel()
			if d := time.Since(start); d != 30*time.Millisecond {
				t.Errorf("the derived context ended at %v, want 30ms", d)
			}
			long, cancel := context.WithTimeout(ctx, time.Hour)
			defer cancel()
			<-long.Done()
			if d := time.Since(start); d != 100*time.Millisecond {
				t.Errorf("the call's deadline ended the derived context at %v, want 100ms", d)
			}
			return long.Err()
		})
		if err != ErrElapsed {
			t.Errorf("Call: got %v, want %v", err, ErrElapsed)
		}
	})
}

// A caller's cancellation reaches the inner call's context, built or not.
func TestCallContextParentCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(20*time.Millisecond, cancel)
		_, err := callWith(t, ctx, time.Second, func(ctx context.Context) error {
			time.Sleep(30 * time.Millisecond)
			if err := ctx.Err(); err != context.Canceled {
				t.Errorf("Err after the caller cancelled: got %v, want %v", err, context.Canceled)
			}
			return ctx.Err()
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Call: got %v, want %v", err, context.Canceled)
		}
	})
}

// A context asked for Done after the call returned is built cancelled.
func TestCallContextBuiltAfterTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := callWith(t, t.Context(), time.Second, func(context.Context) error { return nil })
		if c.has(stdBuilt) {
			t.Fatal("built during the call")
		}
		child, cancel := context.WithCancel(c)
		defer cancel()
		select {
		case <-child.Done():
		default:
			t.Error("a context derived after the call is not cancelled")
		}
		if err := child.Err(); err != context.Canceled {
			t.Errorf("got %v, want %v", err, context.Canceled)
		}
	})
}

// Nested Timeouts whose inner service waits on its context: building the
// inner call's standard context asks the outer call's lazy context for
// Done, which builds that one too. Neither may wait for the other.
func TestCallContextNested(t *testing.T) {
	for _, tt := range []struct {
		name   string
		layers func() []tower.Layer[int, int]
		stuck  time.Duration // when a call that waits for good ends
	}{
		{"Timeout > Timeout", func() []tower.Layer[int, int] {
			return []tower.Layer[int, int]{NewLayer[int, int](time.Second), NewLayer[int, int](500 * time.Millisecond)}
		}, 500 * time.Millisecond},
		{"Timeout > Retry > Timeout", func() []tower.Layer[int, int] {
			return []tower.Layer[int, int]{
				NewLayer[int, int](time.Second),
				retry.NewLayer(retry.NewPolicy[int, int](retry.AnyError)),
				NewLayer[int, int](500 * time.Millisecond),
			}
		}, time.Second}, // the first attempt times out at 500ms, the retry at the outer deadline
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := tower.ServiceFunc[int, int](func(ctx context.Context, req int) (int, error) {
					select {
					case <-ctx.Done():
						return 0, ctx.Err()
					case <-time.After(10 * time.Millisecond):
						return req, nil
					}
				})
				start := time.Now()
				svc := tower.Stack(tt.layers()...).Wrap(inner)
				if got, err := tower.Call(t.Context(), svc, 7); got != 7 || err != nil {
					t.Errorf("got %d, %v; want 7, nil", got, err)
				}
				if d := time.Since(start); d != 10*time.Millisecond {
					t.Errorf("answered after %v, want 10ms", d)
				}

				// And a call that waits for good ends at the deadlines.
				stuck := tower.Stack(tt.layers()...).Wrap(tower.ServiceFunc[int, int](func(ctx context.Context, _ int) (int, error) {
					<-ctx.Done()
					return 0, ctx.Err()
				}))
				start = time.Now()
				if _, err := tower.Call(t.Context(), stuck, 7); err != ErrElapsed {
					t.Errorf("got %v, want %v", err, ErrElapsed)
				}
				if d := time.Since(start); d != tt.stuck {
					t.Errorf("timed out after %v, want %v", d, tt.stuck)
				}
			})
		})
	}
}

// The record is the one allocation per call on the request path. A field
// more moves it past the 64-byte size class, and each size class costs the
// request time (bench/README.md): keep it within.
func TestCallRecordSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the size is stated for 64-bit platforms")
	}
	if got := unsafe.Sizeof(call[string, string]{}); got != 64 {
		t.Errorf("got a call record of %d bytes, want 64", got)
	}
}

// The standard context's timer follows the monotonic clock, as the
// Timeout's own deadline does, so that a step of the wall clock cannot end
// the inner call early. (Outside synctest: inside a bubble, time.Now
// carries no monotonic reading.)
func TestCallContextTimerIsMonotonic(t *testing.T) {
	var std context.Context
	c, err := callWith(t, context.Background(), time.Hour, func(ctx context.Context) error {
		ctx.Done() // builds the standard context
		std = ctx.(*call[int, int]).std.Load().ctx
		return nil
	})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	d, ok := std.Deadline()
	if _, mono := mono.Of(d); !ok || !mono {
		t.Errorf("the standard context's deadline %v carries no monotonic reading", d)
	}
	if want, _ := c.Deadline(); d.Sub(want).Abs() > time.Millisecond {
		t.Errorf("the standard context's deadline is %v, the call's %v: not the same instant", d, want)
	}
}

// A caller's deadline from long ago, the zero time, reads as exactly 2⁶² ns
// before the call's start: passed, and no further back, so that no
// difference of readings wraps around.
func TestCallerDeadlineLongAgo(t *testing.T) {
	now := mono.Now()
	if got, want := callerDeadline(now, time.Time{}), now-1<<62; got != want {
		t.Errorf("callerDeadline(now, zero time) = now%+v, want now%+v", got-now, want-now)
	}
	far := mono.Time(now - 1<<62 - time.Hour) // a monotonic reading further back still
	if got, want := callerDeadline(now, far), now-1<<62; got != want {
		t.Errorf("callerDeadline(now, now-2⁶²-1h) = now%+v, want now%+v", got-now, want-now)
	}
}

// Once the call has returned, its context says how it ended, as a standard
// context would: Canceled for a call that returned before its deadline,
// even by a nanosecond, and DeadlineExceeded for one that returned at it.
// The inner call never looks at its context, so no standard context is
// built and the call's own flags decide. (In Abandon mode the Timeout
// itself waits on the context, so the standard one decides.)
func TestCallContextAfterReturn(t *testing.T) {
	const d = 100 * time.Millisecond
	for _, tt := range []struct {
		took time.Duration
		want error
	}{
		{d - time.Nanosecond, context.Canceled},
		{d, context.DeadlineExceeded},
	} {
		t.Run(tt.took.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var got context.Context
				svc := New(tower.ServiceFunc[int, int](func(ctx context.Context, req int) (int, error) {
					got = ctx
					time.Sleep(tt.took)
					return req, nil
				}), d, WithMode(Cooperative))
				tower.Call(t.Context(), svc, 1)
				if err := got.Err(); err != tt.want {
					t.Errorf("Err after a call that took %v of %v: got %v, want %v", tt.took, d, err, tt.want)
				}
			})
		})
	}
}
