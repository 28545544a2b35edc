package buffer_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/towertest"
)

// callRecovering sends req through s, Ready then Call, on the caller's own
// goroutine, and returns how it ended: an answer, or the value the call
// panicked with.
func callRecovering(ctx context.Context, s svc, req string) (res string, panicked any, err error) {
	defer func() { panicked = recover() }()
	res, err = tower.Call(ctx, s, req)
	return res, nil, err
}

// wantPanicError fails t unless err is a *buffer.ServiceError wrapping a
// *tower.PanicError of a panic at where, with a stack, and returns that
// PanicError.
func wantPanicError(t *testing.T, err error, where string) *tower.PanicError {
	t.Helper()
	var se *buffer.ServiceError
	var pe *tower.PanicError
	if !errors.As(err, &se) || !errors.As(err, &pe) {
		t.Fatalf("got error %v (%T), want a *buffer.ServiceError wrapping a *tower.PanicError", err, err)
	}
	if pe.Where != where {
		t.Errorf("got a panic in %q, want one in %q", pe.Where, where)
	}
	if len(pe.Stack) == 0 {
		t.Error("the PanicError has no stack")
	}
	if got, want := err.Error(), fmt.Sprintf("buffered service failed: tower: panic in %s: %v", where, pe.Value); got != want {
		t.Errorf("got message %q, want %q", got, want)
	}
	return pe
}

// failedFor fails t unless b, and every later caller of it, gets err, and
// the inner service holds no reservation and got no call.
func failedFor(t *testing.T, b svc, h *mock, err error) {
	t.Helper()
	failedForAfter(t, b, h, err, 0)
}

// failedForAfter is failedFor for an inner service that got calls calls.
func failedForAfter(t *testing.T, b svc, h *mock, err error, calls int) {
	t.Helper()
	synctest.Wait()
	if _, ok, err2 := tower.ReadyNow(b); ok || err2 != err {
		t.Errorf("ReadyNow afterwards: got %v, %v; want false and the Buffer's failure %v", ok, err2, err)
	}
	if _, err2 := b.Ready(t.Context()); err2 != err {
		t.Errorf("Ready afterwards: got %v, want the Buffer's failure %v", err2, err)
	}
	if n, o := h.Calls(), h.Outstanding(); n != calls || o != 0 {
		t.Errorf("the inner service got %d calls with %d reservations outstanding, want %d and 0", n, o, calls)
	}
}

// The inner service's Ready panics on the caller's goroutine, which
// asks it itself as nothing is queued. The panic goes on up to the caller;
// the Buffer fails for good with it; the slot comes back. Before the fix
// the slot leaked, and a Buffer(1) was dead: ReadyNow answered not ready,
// with no error, for ever.
func TestReadyPanicOnCallersGoroutine(t *testing.T) {
	for _, bound := range []int{1, 4} {
		t.Run(fmt.Sprint("Bound", bound), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, h := towertest.NewMock[string, string]()
				b := buffer.New[string, string](m, bound)
				v := errors.New("inner Ready's bug")
				h.PanicReady(v)
				if _, got, _ := callRecovering(t.Context(), b, "hello"); got != v {
					t.Errorf("the caller's goroutine panicked with %v, want %v", got, v)
				}
				if n := buffer.SlotsFree(b); n != bound {
					t.Errorf("%d of %d slots free after the panic, want all: the caller's slot leaked", n, bound)
				}
				_, _, err := tower.ReadyNow(svc(b))
				pe := wantPanicError(t, err, buffer.ReadyNowOnCaller)
				if pe.Value != any(v) || !errors.Is(err, v) {
					t.Errorf("got a panic of %v, want %v, reachable with errors.Is", pe.Value, v)
				}
				if !strings.Contains(string(pe.Stack), "towertest.(*Mock[...]).Ready") {
					t.Errorf("the stack is not the panic's:\n%s", pe.Stack)
				}
				failedFor(t, b, h, err)
			})
		})
	}
}

// faultWhenWaited is an inner service that is not ready now and, once a
// request waits for it, runs fault when trigger is closed.
type faultWhenWaited struct {
	svc
	trigger chan struct{}
	fault   func()
}

func (s *faultWhenWaited) Ready(ctx context.Context) (permit, error) {
	if ctx.Err() != nil {
		return s.svc.Ready(ctx) // the probe of ReadyNow: not ready
	}
	select {
	case <-s.trigger:
		s.fault()
		return s.svc.Ready(ctx)
	case <-ctx.Done():
		return permit{}, ctx.Err()
	}
}

// faults are the ways the inner service's Ready ends without returning.
var faults = []struct {
	name  string
	fault func(v any)
	// value reports whether a PanicError's Value is the fault with v.
	value func(got, v any) bool
}{
	{"Panic", func(v any) { panic(v) }, func(got, v any) bool { return got == v }},
	{"Goexit", func(any) { runtime.Goexit() }, func(got, _ any) bool {
		err, ok := got.(error)
		return ok && strings.Contains(err.Error(), "runtime.Goexit")
	}},
}

// The inner service's Ready panics, or calls runtime.Goexit, while the
// request whose turn it is waits for it, on that request's caller's
// goroutine. The fault goes on to that caller (a panic up its stack, a
// Goexit ending its goroutine); the Buffer fails for good with a
// *ServiceError wrapping the *tower.PanicError, which the queued requests,
// the caller waiting in Ready and every later one get; nothing of the
// inner service's is held. Nothing is closed: no goroutine of the
// Buffer's may be left, or the bubble fails.
func TestReadyPanicWhileWaited(t *testing.T) {
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, h := towertest.NewMock[string, string]()
				h.Allow(0)
				v := errors.New("inner Ready's bug")
				inner := &faultWhenWaited{svc: m, trigger: make(chan struct{}), fault: func() { f.fault(v) }}
				b := buffer.New[string, string](inner, 2)
				var (
					wg       sync.WaitGroup
					panicked any
					returned bool
				)
				holder := towertest.MustReady(t, b)
				wg.Go(func() {
					defer func() { panicked = recover() }()
					holder.Call(t.Context(), "in turn")
					returned = true
				})
				synctest.Wait()
				calls := []*towertest.Outcome[string]{
					towertest.GoCall(t.Context(), towertest.MustReady(t, b), "queued 1"),
					towertest.GoCall(t.Context(), towertest.MustReady(t, b), "queued 2"),
				}
				waiter := towertest.GoReady(t.Context(), b)
				close(inner.trigger)
				wg.Wait()

				switch f.name {
				case "Panic":
					if panicked != any(v) {
						t.Errorf("the caller in turn panicked with %v, want %v", panicked, v)
					}
				case "Goexit":
					if returned || panicked != nil {
						t.Errorf("the caller in turn returned (%v) or panicked (%v); want its goroutine to exit", returned, panicked)
					}
				}
				_, first := calls[0].Wait()
				pe := wantPanicError(t, first, buffer.ReadyNowOnCaller)
				if !f.value(pe.Value, v) {
					t.Errorf("got a PanicError of %v, want the fault's", pe.Value)
				}
				if _, err := calls[1].Wait(); err != first {
					t.Errorf("queued request 2: got %v, want queued request 1's %v", err, first)
				}
				if _, err := waiter.Wait(); err != first {
					t.Errorf("the caller waiting in Ready: got %v, want %v", err, first)
				}
				if n := buffer.SlotsFree(b); n != 2 {
					t.Errorf("%d of 2 slots free, want all", n)
				}
				failedFor(t, b, h, first)
			})
		})
	}
}

// Goexit in the inner service's Ready on the caller's goroutine: that
// goroutine exits, as Goexit wants, and the Buffer fails for good with a
// PanicError that says so; the slot comes back.
func TestReadyGoexitOnCallersGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[string, string]()
		b := buffer.New[string, string](goexitReady{m}, 1)
		var wg sync.WaitGroup
		returned := false
		wg.Go(func() {
			tower.Call(t.Context(), svc(b), "hello")
			returned = true
		})
		wg.Wait()
		if returned {
			t.Error("Call returned, want the caller's goroutine to exit")
		}
		if n := buffer.SlotsFree(b); n != 1 {
			t.Errorf("%d of 1 slots free after the Goexit, want 1", n)
		}
		_, _, err := tower.ReadyNow(svc(b))
		pe := wantPanicError(t, err, buffer.ReadyNowOnCaller)
		if !faults[1].value(pe.Value, nil) {
			t.Errorf("got a PanicError of %v, want one that says runtime.Goexit was called", pe.Value)
		}
		failedFor(t, b, h, err)
	})
}

// goexitReady calls runtime.Goexit in Ready.
type goexitReady struct{ svc }

func (goexitReady) Ready(context.Context) (permit, error) {
	runtime.Goexit()
	return permit{}, nil
}
