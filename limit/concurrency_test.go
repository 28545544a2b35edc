package limit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/internal/sema"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towertest"
)

func newConcurrency(max int) (*limit.Concurrency[string, string], *handle) {
	mock, h := towertest.NewMock[string, string]()
	return limit.NewConcurrency[string, string](mock, max), h
}

func checkSem(t *testing.T, s *limit.Semaphore, avail, waiting int) {
	t.Helper()
	if got := s.Available(); got != avail {
		t.Errorf("got Available() = %d, want %d", got, avail)
	}
	if got := s.Waiting(); got != waiting {
		t.Errorf("got Waiting() = %d, want %d", got, waiting)
	}
}

// tower: basic_service_limit_functionality_with_poll_ready. Two requests in
// flight with a limit of 2; the third Ready waits until one call returns.
func TestConcurrencyBasicLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cl, h := newConcurrency(2)
		c1 := towertest.GoCall(t.Context(), towertest.MustReady(t, cl), "hello 1")
		c2 := towertest.GoCall(t.Context(), towertest.MustReady(t, cl), "hello 2")
		r3 := towertest.GoReady(t.Context(), cl)
		if r3.Done() {
			t.Fatal("third Ready returned with two requests in flight, want it to wait")
		}
		req1 := h.ExpectSettled(t, "hello 1")
		req2 := h.ExpectSettled(t, "hello 2")
		h.ExpectNoneSettled(t)

		req1.Respond("world 1")
		c1.ExpectValue(t, "world 1")
		c3 := towertest.GoCall(t.Context(), r3.Value(t), "hello 3")
		r4 := towertest.GoReady(t.Context(), cl)
		if r4.Done() {
			t.Fatal("fourth Ready returned with two requests in flight, want it to wait")
		}
		req2.Respond("world 2")
		c2.ExpectValue(t, "world 2")
		h.ExpectSettled(t, "hello 3").Respond("world 3")
		c3.ExpectValue(t, "world 3")
		p := r4.Value(t)
		p.Release()
		checkSem(t, cl.Semaphore(), 2, 0)
	})
}

// tower: basic_service_limit_functionality_without_poll_ready. tower checks
// that the waiting task is woken by the response future completing, not
// earlier. Here: the permit is held for the whole inner call, and given back
// when the call returns; the inner call takes 10ms, so the waiter is served
// at 10ms.
func TestConcurrencyPermitHeldUntilCallReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := tower.ServiceFunc[string, string](func(ctx context.Context, req string) (string, error) {
			time.Sleep(10 * time.Millisecond)
			return req, nil
		})
		cl := limit.NewConcurrency[string, string](inner, 1)
		start := time.Now()
		c := towertest.GoCall(t.Context(), towertest.MustReady(t, cl), "hello")
		r := towertest.GoReady(t.Context(), cl)
		echoCall(t, r.Value(t), "again")
		if r.Since(start) != 10*time.Millisecond {
			t.Errorf("waiter served at %v, want 10ms", r.Since(start))
		}
		c.ExpectValue(t, "hello")
	})
}

// tower: request_without_capacity. tower's limit of 0 is a programmer error
// here (see TestConcurrencyBadInputPanics); a limit with every permit taken
// is not ready now, and asking does not queue.
func TestConcurrencyRequestWithoutCapacity(t *testing.T) {
	cl, _ := newConcurrency(1)
	p := towertest.MustReady(t, cl)
	defer p.Release()
	if _, ok := towertest.ReadyNow(t, cl); ok {
		t.Fatal("ReadyNow with the only permit taken: got ready, want not ready")
	}
	checkSem(t, cl.Semaphore(), 0, 0)
}

// tower: reserve_capacity_without_sending_request. A permit reserves its
// place while it is held, before and while it is called.
func TestConcurrencyReserveWithoutSending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cl, h := newConcurrency(1)
		p := towertest.MustReady(t, cl)
		r := towertest.GoReady(t.Context(), cl)
		if r.Done() {
			t.Fatal("Ready returned while another permit was held, want it to wait")
		}
		c := towertest.GoCall(t.Context(), p, "hello")
		req := h.ExpectSettled(t, "hello")
		synctest.Wait()
		if r.Done() {
			t.Fatal("Ready returned while the call was in flight, want it to wait")
		}
		req.Respond("world")
		c.ExpectValue(t, "world")
		p = r.Value(t)
		p.Release()
	})
}

// tower: service_drop_frees_capacity. Dropping a ready service is releasing
// its permit.
func TestConcurrencyReleaseFreesCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cl, h := newConcurrency(1)
		p := towertest.MustReady(t, cl)
		r := towertest.GoReady(t.Context(), cl)
		if r.Done() {
			t.Fatal("Ready returned while another permit was held, want it to wait")
		}
		p.Release()
		release(t, r)
		if n := h.Outstanding(); n != 0 {
			t.Errorf("inner service has %d reservations outstanding, want 0", n)
		}
		checkSem(t, cl.Semaphore(), 1, 0)
	})
}

// tower: response_error_releases_capacity.
func TestConcurrencyResponseErrorReleasesCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cl, h := newConcurrency(1)
		c := towertest.GoCall(t.Context(), towertest.MustReady(t, cl), "hello")
		r := towertest.GoReady(t.Context(), cl)
		boom := errors.New("boom")
		h.ExpectSettled(t, "hello").Fail(boom)
		_, err := c.Wait()
		if err != boom {
			t.Fatalf("Call: got %v, want %v", err, boom)
		}
		release(t, r)
		checkSem(t, cl.Semaphore(), 1, 0)
	})
}

// tower: response_future_drop_releases_capacity. Dropping the response
// future is cancelling the call's context.
func TestConcurrencyCancelledCallReleasesCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cl, h := newConcurrency(1)
		ctx, cancel := context.WithCancel(t.Context())
		c := towertest.GoCall(ctx, towertest.MustReady(t, cl), "hello")
		r := towertest.GoReady(t.Context(), cl)
		h.ExpectSettled(t, "hello") // never answered
		cancel()
		_, err := c.Wait()
		if err != context.Canceled {
			t.Fatalf("Call: got %v, want %v", err, context.Canceled)
		}
		release(t, r)
		checkSem(t, cl.Semaphore(), 1, 0)
	})
}

// tower: multi_waiters. A permit given back wakes only the oldest waiter;
// its permit given back wakes the next.
func TestConcurrencyMultiWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cl, _ := newConcurrency(1)
		p := towertest.MustReady(t, cl)
		r2 := towertest.GoReady(t.Context(), cl)
		r3 := towertest.GoReady(t.Context(), cl)
		checkSem(t, cl.Semaphore(), 0, 2)

		p.Release()
		synctest.Wait()
		if !r2.Done() || r3.Done() {
			t.Fatalf("after one release: got r2 %t, r3 %t finished; want true, false", r2.Done(), r3.Done())
		}
		checkSem(t, cl.Semaphore(), 0, 1)
		release(t, r2)
		release(t, r3)
		checkSem(t, cl.Semaphore(), 1, 0)
	})
}

// A caller waiting for a permit does not ask the inner service: the permit
// comes first, so a limited caller holds nothing of the inner service's.
func TestConcurrencyPermitBeforeInnerReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cl, h := newConcurrency(1)
		h.Allow(0)
		r1 := towertest.GoReady(t.Context(), cl) // has the permit, waits for inner
		checkSem(t, cl.Semaphore(), 0, 0)
		r2 := towertest.GoReady(t.Context(), cl) // waits for the permit
		checkSem(t, cl.Semaphore(), 0, 1)

		h.Allow(1)
		synctest.Wait()
		if !r1.Done() || r2.Done() {
			t.Fatalf("after Allow(1): got r1 %t, r2 %t finished; want true, false", r1.Done(), r2.Done())
		}
		h.Allow(1) // r2 must not take it while it waits for the permit
		synctest.Wait()
		if n := h.Outstanding(); n != 1 {
			t.Fatalf("inner service has %d reservations outstanding, want 1: a caller without a permit reserved the inner service", n)
		}
		if r2.Done() {
			t.Fatal("r2 returned without a permit")
		}
		release(t, r1)
		release(t, r2)
		if n := h.Outstanding(); n != 0 {
			t.Errorf("inner service has %d reservations outstanding, want 0", n)
		}
		checkSem(t, cl.Semaphore(), 1, 0)
	})
}

func TestConcurrencyInnerReadyFailureReleasesPermit(t *testing.T) {
	cl, h := newConcurrency(1)
	broken := errors.New("broken")
	h.FailReady(broken)
	if _, err := cl.Ready(t.Context()); err != broken {
		t.Fatalf("Ready: got %v, want %v", err, broken)
	}
	checkSem(t, cl.Semaphore(), 1, 0)
}

func TestConcurrencyContextEndsWaitingForInner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cl, h := newConcurrency(1)
		h.Allow(0)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, err := cl.Ready(ctx); err != context.DeadlineExceeded {
			t.Fatalf("Ready: got %v, want %v", err, context.DeadlineExceeded)
		}
		if got := time.Since(start); got != 30*time.Millisecond {
			t.Errorf("gave up at %v, want 30ms", got)
		}
		checkSem(t, cl.Semaphore(), 1, 0)
	})
}

func TestConcurrencyContextEndsWaitingForPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cl, _ := newConcurrency(1)
		p := towertest.MustReady(t, cl)
		ctx, cancel := context.WithTimeout(t.Context(), 40*time.Millisecond)
		defer cancel()
		r := towertest.GoReady(ctx, cl)
		_, err := r.Wait()
		if err != context.DeadlineExceeded || r.Elapsed() != 40*time.Millisecond {
			t.Fatalf("got %v at %v, want %v unchanged at 40ms", err, r.Elapsed(), context.DeadlineExceeded)
		}
		checkSem(t, cl.Semaphore(), 0, 0)
		p.Release()
		checkSem(t, cl.Semaphore(), 1, 0)
	})
}

func TestConcurrencyPanickingCallReleasesPermit(t *testing.T) {
	inner := tower.ServiceFunc[string, string](func(context.Context, string) (string, error) {
		panic("inner exploded")
	})
	cl := limit.NewConcurrency[string, string](inner, 1)
	for i := range 2 { // the second round needs the permit back
		p, ok := towertest.ReadyNow(t, cl)
		if !ok {
			t.Fatalf("round %d: ReadyNow: got not ready, want the permit back", i)
		}
		towertest.Panics(t, "inner exploded", func() { p.Call(t.Context(), "hello") })
		checkSem(t, cl.Semaphore(), 1, 0)
	}
}

// Two services under one Semaphore of 1 share its single permit, whether
// they are built with NewConcurrencyWith or by a shared layer.
func TestConcurrencyShared(t *testing.T) {
	for _, tt := range []struct {
		name string
		wrap func(sem *limit.Semaphore, a, b svc) (svc, svc)
	}{
		{"NewConcurrencyWith", func(sem *limit.Semaphore, a, b svc) (svc, svc) {
			return limit.NewConcurrencyWith(a, sem), limit.NewConcurrencyWith(b, sem)
		}},
		{"NewSharedConcurrencyLayer", func(sem *limit.Semaphore, a, b svc) (svc, svc) {
			l := limit.NewSharedConcurrencyLayer[string, string](sem)
			return l.Wrap(a), l.Wrap(b)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sem := limit.NewSemaphore(1)
				mockA, ha := towertest.NewMock[string, string]()
				mockB, hb := towertest.NewMock[string, string]()
				a, b := tt.wrap(sem, mockA, mockB)
				if got := a.(*limit.Concurrency[string, string]).Semaphore(); got != sem {
					t.Fatal("Semaphore() is not the shared semaphore")
				}

				c := towertest.GoCall(t.Context(), towertest.MustReady(t, a), "to a")
				rb := towertest.GoReady(t.Context(), b)
				checkSem(t, sem, 0, 1)
				if rb.Done() {
					t.Fatal("b got a permit while a held the only one")
				}
				ha.ExpectSettled(t, "to a").Respond("from a")
				c.ExpectValue(t, "from a")
				c = towertest.GoCall(t.Context(), rb.Value(t), "to b")
				hb.ExpectSettled(t, "to b").Respond("from b")
				c.ExpectValue(t, "from b")
				checkSem(t, sem, 1, 0)
			})
		})
	}
}

func TestSemaphoreCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sem := limit.NewSemaphore(2)
		cl := limit.NewConcurrencyWith[string, string](echo, sem)
		checkSem(t, sem, 2, 0)
		p1 := towertest.MustReady(t, cl)
		checkSem(t, sem, 1, 0)
		p2 := towertest.MustReady(t, cl)
		checkSem(t, sem, 0, 0)
		r1 := towertest.GoReady(t.Context(), cl)
		r2 := towertest.GoReady(t.Context(), cl)
		checkSem(t, sem, 0, 2)
		p1.Release()
		synctest.Wait()
		checkSem(t, sem, 0, 1)
		p2.Call(t.Context(), "x")
		synctest.Wait()
		checkSem(t, sem, 0, 0)
		release(t, r1)
		checkSem(t, sem, 1, 0)
		echoCall(t, r2.Value(t), "y")
		checkSem(t, sem, 2, 0)
	})
}

func TestConcurrencyBadInputPanics(t *testing.T) {
	limitMsg := func(fn string, max int) string {
		return fmt.Sprintf("%s: max must be between 1 and %d, got %d", fn, sema.MaxUnits, max)
	}
	sem := limit.NewSemaphore(1)
	for _, tt := range []struct {
		name string
		f    func()
		want string
	}{
		{"NewSemaphoreZero", func() { limit.NewSemaphore(0) }, limitMsg("limit.NewSemaphore", 0)},
		{"NewSemaphoreTooBig", func() { limit.NewSemaphore(sema.MaxUnits + 1) }, limitMsg("limit.NewSemaphore", sema.MaxUnits+1)},
		{"NewConcurrencyNilInner", func() { limit.NewConcurrency[string, string](nil, 1) }, "limit.NewConcurrency: inner is nil"},
		{"NewConcurrencyZero", func() { limit.NewConcurrency[string, string](echo, 0) }, limitMsg("limit.NewConcurrency", 0)},
		{"NewConcurrencyNegative", func() { limit.NewConcurrency[string, string](echo, -1) }, limitMsg("limit.NewConcurrency", -1)},
		{"NewConcurrencyWithNilInner", func() { limit.NewConcurrencyWith[string, string](nil, sem) }, "limit.NewConcurrencyWith: inner is nil"},
		{"NewConcurrencyWithNilSem", func() { limit.NewConcurrencyWith[string, string](echo, nil) }, "limit.NewConcurrencyWith: sem is nil"},
		{"NewConcurrencyLayerZero", func() { limit.NewConcurrencyLayer[string, string](0) }, limitMsg("limit.NewConcurrencyLayer", 0)},
		{"NewSharedConcurrencyLayerNil", func() { limit.NewSharedConcurrencyLayer[string, string](nil) }, "limit.NewSharedConcurrencyLayer: sem is nil"},
	} {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}

// panicReady is a service whose Ready panics.
type panicReady struct{}

func (panicReady) Ready(context.Context) (permit, error) { panic("inner Ready exploded") }

// A panic in the inner service's Ready gives the permit back, as a failure
// would.
func TestConcurrencyPanickingReadyReleasesPermit(t *testing.T) {
	cl := limit.NewConcurrency[string, string](panicReady{}, 1)
	for range 2 {
		towertest.Panics(t, "inner Ready exploded", func() { cl.Ready(t.Context()) })
		checkSem(t, cl.Semaphore(), 1, 0)
	}
}

// The records of most permits live in slots of the semaphore, a few per
// stripe; permits beyond them take pooled records. Both kinds count against
// the limit, call or release exactly once, refuse stale copies, and give
// back the unit, whatever order they are used in.
func TestConcurrencyPermitsBeyondTheSlots(t *testing.T) {
	const max = 12 // a semaphore of one stripe, with 8 slots: 4 permits have none
	const used = "tower: Call on a Permit that was already called or released (or is the zero Permit)"
	cl := limit.NewConcurrency[string, string](echo, max)
	for round := range 2 { // the second round reuses the records of the first
		var ps []permit
		for range max {
			ps = append(ps, towertest.MustReady(t, cl))
		}
		if _, ok := towertest.ReadyNow(t, cl); ok {
			t.Fatalf("round %d: ReadyNow with all %d permits out: got ready", round, max)
		}
		for i, p := range ps {
			stale := p
			if (i+round)%2 == 0 {
				if res, err := p.Call(t.Context(), "hello"); res != "hello" || err != nil {
					t.Fatalf("round %d, permit %d: got %q, %v; want hello", round, i, res, err)
				}
			} else {
				p.Release()
			}
			towertest.Panics(t, used, func() { stale.Call(t.Context(), "again") })
			stale.Release() // does nothing
			checkSem(t, cl.Semaphore(), i+1, 0)
		}
	}
}
