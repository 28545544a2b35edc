package buffer_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/buffer"
	"github.com/towergo/tower/towertest"
)

// The tests in this file port tower's tests/buffer/main.rs, scenario by
// scenario. tower's tests drive its worker by hand or on a thread, and
// "let the worker work"; ours have no worker to drive: each caller's
// goroutine does its request's part, inside a synctest bubble, and
// synctest.Wait lets every goroutine run as far as it can.

// tower: req_and_res.
func TestRequestAndResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, h := newBuffer(t, 10)
		call := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "hello")
		h.ExpectSettled(t, "hello").Respond("world")
		call.ExpectValue(t, "world")
	})
}

// tower: clears_canceled_requests. The caller of "hello2" gives up while
// its request is queued (tower drops the response future; we cancel the
// ctx): the request leaves, and the next one the inner service sees is
// "hello3".
func TestClearsCanceledRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, h := newBuffer(t, 10)
		h.Allow(1)
		call1 := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "hello")
		r1 := h.ExpectSettled(t, "hello")

		ctx2, cancel2 := context.WithCancel(t.Context())
		call2 := towertest.GoCall(ctx2, towertest.MustReady(t, b), "hello2")
		h.ExpectNoneSettled(t)
		call3 := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "hello3")

		cancel2()
		call2.ExpectError(t, context.Canceled)
		r1.Respond("world")
		call1.ExpectValue(t, "world")

		h.Allow(1)
		h.ExpectSettled(t, "hello3").Respond("world3")
		call3.ExpectValue(t, "world3")
		if n := h.Calls(); n != 2 {
			t.Errorf("the inner service got %d calls, want 2", n)
		}
	})
}

// tower: when_inner_is_not_ready.
func TestWhenInnerIsNotReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, h := newBuffer(t, 10)
		h.Allow(0)
		call := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "hello")
		h.ExpectNoneSettled(t)
		if call.Done() {
			t.Fatal("Call returned although the inner service is not ready")
		}
		h.Allow(1)
		h.ExpectSettled(t, "hello").Respond("world")
		call.ExpectValue(t, "world")
	})
}

// tower: when_inner_fails. The inner service fails its readiness check: the
// Buffer's Ready still succeeds (it only reserves a slot), and the call
// fails with a *ServiceError through which the cause is reachable.
func TestWhenInnerFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, h := newBuffer(t, 10)
		h.Allow(0)
		h.FailReady(errFoobar)
		p := towertest.MustReady(t, b)
		_, err := p.Call(t.Context(), "hello")
		wantServiceError(t, err)
		if n := h.Calls(); n != 0 {
			t.Errorf("the inner service got %d calls, want 0", n)
		}
	})
}

// tower: poll_ready_when_worker_is_dropped_early. tower drops the worker;
// our way to stop a Buffer is Close.
func TestReadyAfterClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newBuffer(t, 1)
		b.Close()
		if _, err := b.Ready(t.Context()); err != buffer.ErrClosed {
			t.Errorf("Ready: got error %v, want %v", err, buffer.ErrClosed)
		}
		if got, want := buffer.ErrClosed.Error(), "buffer's worker closed unexpectedly"; got != want {
			t.Errorf("got message %q, want %q", got, want)
		}
	})
}

// tower: response_future_when_worker_is_dropped_early. The request is in
// its turn, waiting for the inner service, when the Buffer closes.
func TestCallAfterCloseWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, h := newBuffer(t, 1)
		h.Allow(0)
		call := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "hello")
		b.Close()
		call.ExpectError(t, buffer.ErrClosed)
		if n := h.Outstanding(); n != 0 {
			t.Errorf("the inner service has %d reservations outstanding, want 0", n)
		}
	})
}

// tower: waits_for_channel_capacity. With bound 2 and the inner service not
// ready, three calls are accepted: one in its turn and two queued. The
// fourth Ready waits until the next request's turn comes.
//
// tower's worker calls the inner service itself, so after allow(3) requests
// 2, 3 and 4 arrive in order. In ours each caller's goroutine makes its own
// call, so requests readied together may arrive in any order; the order
// they are readied in is exact, and the test lets the inner service take
// one request at a time to see it.
func TestWaitsForChannelCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, h := newBuffer(t, 2)
		h.Allow(0)
		var calls [4]*towertest.Outcome[string]
		for i, req := range []string{"hello1", "hello2", "hello3"} {
			p, ok, err := tower.ReadyNow[string, string](b)
			if !ok || err != nil {
				t.Fatalf("Ready %d: got %v, %v; want a slot without waiting", i+1, ok, err)
			}
			calls[i] = towertest.GoCall(t.Context(), p, req)
		}
		if p, ok, _ := tower.ReadyNow[string, string](b); ok {
			p.Release()
			t.Fatal("a fourth Ready got a slot, want none: 1 in hand + 2 queued")
		}
		ready4 := towertest.GoReady(t.Context(), b)
		if ready4.Done() {
			t.Fatal("the fourth Ready returned, want it to wait for capacity")
		}
		h.ExpectNoneSettled(t)

		h.Allow(1)
		h.ExpectSettled(t, "hello1").Respond("world1")
		calls[0].ExpectValue(t, "world1")
		synctest.Wait()
		if !ready4.Done() {
			t.Fatal("the fourth Ready still waits after request 2's turn came")
		}
		p4 := ready4.Value(t)
		calls[3] = towertest.GoCall(t.Context(), p4, "hello4")

		for i, req := range []string{"hello2", "hello3", "hello4"} {
			h.Allow(1)
			h.ExpectSettled(t, req).Respond("world" + req[len(req)-1:])
			calls[i+1].ExpectValue(t, "world"+req[len(req)-1:])
			h.ExpectNoneSettled(t)
		}
	})
}

// tower: wakes_pending_waiters_on_close and wakes_pending_waiters_on_failure.
// With bound 1, "hello" is in its turn waiting for the inner service, "world" is queued, and two more callers wait in Ready for a slot.
// Stopping the Buffer, by Close (tower drops the worker) or by an inner
// failure, fails both requests and wakes both waiters with the same error.
func TestWakesPendingWaiters(t *testing.T) {
	tests := []struct {
		name  string
		stop  func(*buffer.Buffer[string, string], *mock)
		check func(t *testing.T, err error)
	}{
		{"OnClose", func(b *buffer.Buffer[string, string], _ *mock) { b.Close() },
			func(t *testing.T, err error) {
				t.Helper()
				if err != buffer.ErrClosed {
					t.Errorf("got error %v, want %v", err, buffer.ErrClosed)
				}
			}},
		{"OnFailure", func(_ *buffer.Buffer[string, string], h *mock) { h.FailReady(errFoobar) },
			func(t *testing.T, err error) { t.Helper(); wantServiceError(t, err) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, h := newBuffer(t, 1)
				h.Allow(0)
				hello := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "hello")
				world := towertest.GoCall(t.Context(), towertest.MustReady(t, b), "world")
				w1 := towertest.GoReady(t.Context(), b)
				w2 := towertest.GoReady(t.Context(), b)
				for i, o := range []*towertest.Outcome[permit]{w1, w2} {
					if o.Done() {
						t.Fatalf("waiter %d returned, want it to wait: no capacity", i+1)
					}
				}

				tt.stop(b, h)
				var errs []error
				for _, o := range []*towertest.Outcome[string]{hello, world} {
					_, err := o.Wait()
					errs = append(errs, err)
				}
				for _, o := range []*towertest.Outcome[permit]{w1, w2} {
					_, err := o.Wait()
					errs = append(errs, err)
				}
				for _, err := range errs {
					tt.check(t, err)
				}
				// Every caller shares one error value.
				for i, err := range errs[1:] {
					if err != errs[0] {
						t.Errorf("caller %d got %p, caller 1 got %p: want one shared error", i+2, err, errs[0])
					}
				}
				if n := h.Calls(); n != 0 {
					t.Errorf("the inner service got %d calls, want 0", n)
				}
			})
		})
	}
}

type ctxKey struct{}

// readySpy records the value under ctxKey in the context of every Ready
// that granted a permit.
type readySpy struct {
	svc
	mu   sync.Mutex
	seen []any
}

func (s *readySpy) Ready(ctx context.Context) (permit, error) {
	p, err := s.svc.Ready(ctx)
	if err == nil {
		s.mu.Lock()
		s.seen = append(s.seen, ctx.Value(ctxKey{}))
		s.mu.Unlock()
	}
	return p, err
}

// tower: propagates_trace_spans. tower carries the caller's tracing span to
// the worker, which polls the inner service's readiness inside it. Ours
// carries values in the context: the inner service's call gets the caller's
// ctx itself, because the caller's goroutine makes it. The inner service's
// Ready sees the caller's values only when it had to wait: a request in
// its turn first asks with tower.ReadyNow, whose context carries no values,
// and only if the inner service is not ready now does it wait under a
// context derived from the caller's.
func TestPropagatesContextValues(t *testing.T) {
	tests := []struct {
		name      string
		allow     int // before the call; -1 means always ready
		wantReady any // the value the inner service's granting Ready sees
	}{
		{"InnerReadyNow", -1, nil},
		{"InnerReadyAfterWait", 0, "my_span"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, h := towertest.NewMock[string, string]()
				spy := &readySpy{svc: m}
				b := buffer.New[string, string](spy, 5)
				defer b.Close()
				if tt.allow >= 0 {
					h.Allow(tt.allow)
				}
				ctx := context.WithValue(t.Context(), ctxKey{}, "my_span")
				call := towertest.GoCall(ctx, towertest.MustReady(t, b), "hello")
				h.AllowAll()
				r := h.ExpectSettled(t, "hello")
				if got := r.Context().Value(ctxKey{}); got != "my_span" {
					t.Errorf("the inner call's context has %v, want %q", got, "my_span")
				}
				r.Respond("world")
				call.ExpectValue(t, "world")
				spy.mu.Lock()
				defer spy.mu.Unlock()
				if len(spy.seen) != 1 || spy.seen[0] != tt.wantReady {
					t.Errorf("the inner Ready that granted saw %v, want [%v]", spy.seen, tt.wantReady)
				}
			})
		})
	}
}

// tower: doesnt_leak_permits. tower's handles reserve one slot however many
// times poll_ready is called; ours have no handles: each Ready is its own
// reservation. With bound 2, two reservations take both slots and a third
// caller waits. A reservation released unused wakes the next waiter, and
// only that one; a called one frees its slot when its turn comes, which
// wakes the waiter after it.
func TestEachReadyIsItsOwnReservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, h := newBuffer(t, 2)
		p1, p2 := towertest.MustReady(t, b), towertest.MustReady(t, b)
		if p, ok, _ := tower.ReadyNow[string, string](b); ok {
			p.Release()
			t.Fatal("a third Ready got a slot, want both taken by the first two")
		}
		wA := towertest.GoReady(t.Context(), b)
		wB := towertest.GoReady(t.Context(), b)

		p2.Release()
		synctest.Wait()
		if !wA.Done() {
			t.Fatal("the first waiter still waits after a reservation was released")
		}
		if wB.Done() {
			t.Fatal("the second waiter returned, want only the first woken")
		}

		call := towertest.GoCall(t.Context(), p1, "hello")
		h.ExpectSettled(t, "hello").Respond("world")
		call.ExpectValue(t, "world")
		if !wB.Done() {
			t.Fatal("the second waiter still waits after the first request's turn came")
		}
		for _, w := range []*towertest.Outcome[permit]{wA, wB} {
			p := w.Value(t)
			p.Release()
		}
		if p, ok, _ := tower.ReadyNow[string, string](b); !ok {
			t.Error("no slot free after every reservation was given back, want 2")
		} else {
			p.Release()
		}
	})
}

// A caller whose deadline passes at the very instant the inner service
// becomes ready has given up, even if its context has not noticed yet: it
// may get the inner permit, but the request must not reach the inner
// service, and the permit goes back. Whichever of the two events the
// scheduler runs first, the outcome is the same (as in examples/queueing,
// where request 3 never reaches the inner service).
func TestDeadlineAtTheInstantOfReadiness(t *testing.T) {
	for i := range 50 {
		synctest.Test(t, func(t *testing.T) {
			b, h := newBuffer(t, 1)
			h.Allow(0)
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			time.AfterFunc(100*time.Millisecond, func() { h.Allow(1) })
			start := time.Now()
			_, err := tower.Call(ctx, svc(b), "late")
			if err != context.DeadlineExceeded || time.Since(start) != 100*time.Millisecond {
				t.Errorf("round %d: got %v at %v, want %v at 100ms", i, err, time.Since(start), context.DeadlineExceeded)
			}
			synctest.Wait()
			if n, o := h.Calls(), h.Outstanding(); n != 0 || o != 0 {
				t.Errorf("round %d: the inner service got %d calls with %d reservations outstanding, want 0 and 0", i, n, o)
			}
		})
	}
}
