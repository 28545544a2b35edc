package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/breaker"
	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// Results of calls admitted while closed, ending after the breaker
// opened, are dropped: a late success does not close the half-open
// breaker, a late failure does not open it again, and neither counts in
// the next closed period.
func TestLateResultsOfClosedPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithConsecutiveFailures(2))
		a1, a2, a3 := readyNow(t, b), readyNow(t, b), readyNow(t, b)
		sendN(t, b, bad, 2)
		expectState(t, b, breaker.Open)
		a1.Call(t.Context(), bad) // late, while open: no second trip
		time.Sleep(time.Second)
		probe := readyNow(t, b)
		a2.Call(t.Context(), ok) // late, while half-open: does not close
		expectState(t, b, breaker.HalfOpen)
		expectNotReady(t, b) // and did not free the probe's place
		probe.Call(t.Context(), ok)
		expectState(t, b, breaker.Closed)
		send(t, b, bad)
		a3.Call(t.Context(), bad) // late, in the next closed period: not the second in a row
		expectState(t, b, breaker.Closed)
		send(t, b, bad)
		expectState(t, b, breaker.Open)
		// The delay is 1s: the late failure while open did not count as a
		// trip.
		if got, p := openFor(t, b); got != time.Second {
			t.Errorf("delay %v, want 1s", got)
		} else {
			p.Release()
		}
	})
}

// The results of probes of a half-open period that has ended are dropped:
// after one probe failed, the other's success does not close the breaker,
// nor free a place.
func TestLateProbeResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithConsecutiveFailures(1), breaker.WithProbes(2))
		send(t, b, bad)
		time.Sleep(time.Second)
		p1, p2, p3 := readyNow(t, b), readyNow(t, b), tower.Permit[int, int]{}
		p1.Call(t.Context(), bad)
		p2.Call(t.Context(), ok)
		expectState(t, b, breaker.Open)
		time.Sleep(2 * time.Second)
		p3 = readyNow(t, b)
		p4 := readyNow(t, b)
		expectNotReady(t, b)
		p3.Release()
		p4.Release()
	})
	// A probe of the last period that ends while the breaker is
	// half-open again does not take the place of a new one.
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(breaker.WithConsecutiveFailures(1), breaker.WithProbes(2))
		send(t, b, bad)
		time.Sleep(time.Second)
		p1, p2 := readyNow(t, b), readyNow(t, b)
		p1.Call(t.Context(), bad)
		time.Sleep(2 * time.Second)
		q1, q2 := readyNow(t, b), readyNow(t, b)
		p2.Release() // late: must not free a place of this period
		expectNotReady(t, b)
		q1.Call(t.Context(), bad) // the new period's probe counts
		expectState(t, b, breaker.Open)
		q2.Release()
	})
}

// A Ready that waits in the inner service while the breaker opens does
// not send its request: it gives the inner permit back, and waits for
// the breaker like any other, getting a probe when the delay ends.
func TestReadyWaitingInInnerWhileTripped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[int, int]()
		b := breaker.New(m, breaker.AnyError, breaker.WithConsecutiveFailures(1), breaker.WithJitter(0),
			breaker.WithOpenDelay(time.Second, time.Minute))
		first := readyNow(t, b)
		h.Allow(0)
		w := towertest.GoReady(t.Context(), b)
		call := towertest.GoCall(t.Context(), first, bad)
		h.ExpectSettled(t, bad).Fail(errBoom)
		call.ExpectError(t, errBoom)
		expectState(t, b, breaker.Open)
		time.Sleep(200 * ms)
		h.AllowAll()
		w.ExpectPending(t)
		h.ExpectOutstanding(t, 0) // the inner permit it got went back
		w.ExpectElapsed(t, time.Second)
		expectState(t, b, breaker.HalfOpen)
		p := w.Value(t)
		c := towertest.GoCall(t.Context(), p, ok)
		h.ExpectSettled(t, ok).Respond(ok)
		c.ExpectValue(t, ok)
		expectState(t, b, breaker.Closed)
	})
}

// Likewise a probe whose inner Ready waited while another probe reopened
// the breaker: its place is not counted twice, and it waits again.
func TestProbeWaitingInInnerWhileReopened(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[int, int]()
		b := breaker.New(m, breaker.AnyError, breaker.WithConsecutiveFailures(1), breaker.WithJitter(0),
			breaker.WithOpenDelay(time.Second, time.Minute), breaker.WithProbes(2))
		b.Isolate()
		b.Reset()
		c := towertest.GoRequest(t.Context(), b, bad)
		h.ExpectSettled(t, bad).Fail(errBoom)
		c.ExpectError(t, errBoom)
		time.Sleep(time.Second)
		p1 := readyNow(t, b)
		h.Allow(0)
		w := towertest.GoReady(t.Context(), b)
		call := towertest.GoCall(t.Context(), p1, bad)
		h.ExpectSettled(t, bad).Fail(errBoom)
		call.ExpectError(t, errBoom)
		h.AllowAll()
		w.ExpectPending(t)
		h.ExpectOutstanding(t, 0)
		w.ExpectElapsed(t, 2*time.Second)
		p := w.Value(t)
		p.Release()
	})
}

// An error of the inner Ready comes back unchanged; a probe's place taken
// for it is given back.
func TestInnerReadyError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		broken := errors.New("broken")
		m, h := towertest.NewMock[int, int]()
		b := breaker.New(m, breaker.AnyError, breaker.WithConsecutiveFailures(1), breaker.WithJitter(0),
			breaker.WithOpenDelay(time.Second, time.Minute))
		c := towertest.GoRequest(t.Context(), b, bad)
		h.ExpectSettled(t, bad).Fail(errBoom)
		c.ExpectError(t, errBoom)
		time.Sleep(time.Second)
		h.Allow(0)
		h.FailReady(broken)
		if _, err := b.Ready(t.Context()); err != broken {
			t.Fatalf("Ready: got %v, want %v", err, broken)
		}
		expectState(t, b, breaker.HalfOpen)
		h.FailReady(nil)
		h.AllowAll()
		p := readyNow(t, b) // the place was given back
		p.Release()
	})
}

// A call whose caller gave up (its ctx ended, and the classifier does not
// count the error) counts as nothing: not a success that would reset the
// count of failures, nor close a half-open breaker, nor a failure.
func TestCallerGaveUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := towertest.NewMock[int, int]()
		b := breaker.New(m, breaker.AnyError, breaker.WithConsecutiveFailures(2), breaker.WithJitter(0),
			breaker.WithOpenDelay(time.Second, time.Minute))
		fail := func() {
			c := towertest.GoRequest(t.Context(), b, bad)
			h.ExpectSettled(t, bad).Fail(errBoom)
			c.ExpectError(t, errBoom)
		}
		giveUp := func() {
			ctx, cancel := context.WithCancel(t.Context())
			c := towertest.GoRequest(ctx, b, ok)
			r := h.ExpectSettled(t, ok)
			cancel()
			r.Fail(context.Canceled)
			c.ExpectError(t, context.Canceled)
		}
		fail()
		giveUp()
		expectState(t, b, breaker.Closed)
		fail()
		expectState(t, b, breaker.Open)
		time.Sleep(time.Second)
		giveUp()
		expectState(t, b, breaker.HalfOpen)
		c := towertest.GoRequest(t.Context(), b, ok) // the place is free again
		h.ExpectSettled(t, ok).Respond(ok)
		c.ExpectValue(t, ok)
		expectState(t, b, breaker.Closed)
	})
	// An error the classifier forgives, from a call whose ctx is still
	// live, is the backend answering: a success.
	synctest.Test(t, func(t *testing.T) {
		b := breaker.New(backend, func(_ int, err error) bool { return err != nil && err != errBoom },
			breaker.WithConsecutiveFailures(1), breaker.WithJitter(0))
		b.Isolate()
		b.Reset()
		sendN(t, b, bad, 3)
		expectState(t, b, breaker.Closed)
	})
}

// AnyError counts every error but context.Canceled, wrapped or not, and
// no response.
func TestAnyError(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errBoom, true},
		{context.DeadlineExceeded, true},
		{context.Canceled, false},
		{fmt.Errorf("call: %w", context.Canceled), false},
	} {
		if got := breaker.AnyError(0, tt.err); got != tt.want {
			t.Errorf("AnyError(%v) = %t, want %t", tt.err, got, tt.want)
		}
	}
}

// The budget: a probe goes only if it withdraws. Refused when the delay
// ends, the breaker stays open (no change told) for another delay as
// long (not doubled); then, granted, the probe goes.
func TestBudgetRefusalKeepsOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var bud budget
		var c changes
		b := newBreaker(breaker.WithConsecutiveFailures(1), breaker.WithBudget(&bud), breaker.WithStateChange(c.record))
		send(t, b, bad)
		w := towertest.GoReady(t.Context(), b)
		time.Sleep(time.Second)
		w.ExpectPending(t)
		expectNotReady(t, b)
		expectState(t, b, breaker.Open)
		bud.set(1)
		time.Sleep(time.Second - 1)
		w.ExpectPending(t)
		time.Sleep(time.Nanosecond)
		w.ExpectElapsed(t, 2*time.Second)
		p := w.Value(t)
		expectState(t, b, breaker.HalfOpen)
		if bud.withdrawn != 1 || bud.deposits != 0 {
			t.Errorf("withdrew %d, deposited %d; want 1 and 0", bud.withdrawn, bud.deposits)
		}
		p.Call(t.Context(), ok)
		if got, want := c.String(), "closed>open open>half-open half-open>closed"; got != want {
			t.Errorf("changes %q, want %q", got, want)
		}
	})
}

// A later probe the budget refuses waits for a probe under way to end; if
// none is under way, the breaker opens again for as long as the last
// delay.
func TestBudgetRefusesLaterProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bud := budget{left: 1}
		var c changes
		var sink metrics.Counts
		b := newBreaker(breaker.WithConsecutiveFailures(1), breaker.WithBudget(&bud), breaker.WithProbes(2),
			breaker.WithSuccesses(2), breaker.WithStateChange(c.record), breaker.WithMetrics(&sink))
		send(t, b, bad)
		time.Sleep(time.Second)
		p1 := readyNow(t, b)
		expectNotReady(t, b) // a place, but no budget: waits for p1
		w := towertest.GoReady(t.Context(), b)
		w.ExpectPending(t)
		bud.set(1)
		p1.Call(t.Context(), ok) // frees a place: w withdraws and goes
		p2 := w.Value(t)
		p2.Release() // no probe under way, one success of two
		expectState(t, b, breaker.HalfOpen)
		expectNotReady(t, b) // refused with none under way: open again
		expectState(t, b, breaker.Open)
		bud.set(1)
		if got, p := openFor(t, b); got != time.Second {
			t.Errorf("delay %v, want 1s as before", got)
		} else {
			p.Release()
		}
		if got, want := c.String(), "closed>open open>half-open half-open>open open>half-open"; got != want {
			t.Errorf("changes %q, want %q", got, want)
		}
		if got := sink.Get(metrics.Tripped); got != 2 {
			t.Errorf("Tripped %d, want 2", got)
		}
	})
}

// A nil budget is no budget.
func TestNilBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var nilBudget *budget
		b := newBreaker(breaker.WithConsecutiveFailures(1), breaker.WithBudget(nilBudget))
		send(t, b, bad)
		time.Sleep(time.Second)
		send(t, b, ok)
		expectState(t, b, breaker.Closed)
	})
}

// Metrics: Open +1 as the breaker leaves closed and -1 as it closes,
// Tripped +1 at each transition to open; the callback hears every change
// in order.
func TestMetricsAndCallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sink metrics.Counts
		var c changes
		b := newBreaker(breaker.WithConsecutiveFailures(1), breaker.WithMetrics(&sink), breaker.WithStateChange(c.record))
		check := func(open, tripped int64) {
			t.Helper()
			if got := sink.Get(metrics.Open); got != open {
				t.Errorf("Open %d, want %d", got, open)
			}
			if got := sink.Get(metrics.Tripped); got != tripped {
				t.Errorf("Tripped %d, want %d", got, tripped)
			}
		}
		send(t, b, bad)
		check(1, 1)
		time.Sleep(time.Second)
		send(t, b, bad)
		check(1, 2)
		time.Sleep(2 * time.Second)
		send(t, b, ok)
		check(0, 2)
		b.Isolate()
		check(1, 3)
		b.Reset()
		check(0, 3)
		want := "closed>open open>half-open half-open>open open>half-open half-open>closed closed>open open>closed"
		if got := c.String(); got != want {
			t.Errorf("changes %q, want %q", got, want)
		}
	})
}

// A callback that panics: the panic reaches the caller whose call made
// the change, the breaker has changed all the same, and later changes
// are told.
func TestCallbackPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c changes
		first := true
		b := newBreaker(breaker.WithConsecutiveFailures(1), breaker.WithStateChange(func(from, to breaker.State) {
			if first {
				first = false
				panic("callback")
			}
			c.record(from, to)
		}))
		mustPanic(t, "callback", func() { send(t, b, bad) })
		expectState(t, b, breaker.Open)
		time.Sleep(time.Second)
		send(t, b, ok)
		if got, want := c.String(), "open>half-open half-open>closed"; got != want {
			t.Errorf("changes %q, want %q", got, want)
		}
	})
}

// Changes are told in order even when a change is made while the
// callback tells an earlier one, on another goroutine: the second is told
// after the first returns, by the goroutine telling.
func TestCallbackOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c changes
		release := make(chan struct{})
		b := newBreaker(breaker.WithConsecutiveFailures(1), breaker.WithStateChange(func(from, to breaker.State) {
			if to == breaker.Open {
				<-release
			}
			c.record(from, to)
		}))
		tripper := towertest.GoRequest(t.Context(), b, bad) // blocks telling closed>open
		b.Reset()                                           // open>closed, queued behind it
		if got := c.String(); got != "" {
			t.Errorf("changes %q told before the first", got)
		}
		close(release)
		tripper.ExpectError(t, errBoom)
		if got, want := c.String(), "closed>open open>closed"; got != want {
			t.Errorf("changes %q, want %q", got, want)
		}
	})
}
