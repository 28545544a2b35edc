package balance_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	towermetrics "github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// A panic in the classifier goes up to the caller of Call, once the call
// has returned: nothing stays reserved, and the balancer carries on.
func TestOutlierClassifierPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, h := constMock(-1, 0)
		calls := 0
		bal := balance.NewP2C(list(m), balance.WithOutlierDetection(func(string, error) bool {
			calls++
			if calls == 1 {
				panic("classifier's bug")
			}
			return false
		}))
		defer bal.Close()
		p := readySettled(t, bal)
		go func() {
			r, _ := h.Next(t.Context())
			r.Respond("ok")
		}()
		towertest.Panics(t, "classifier's bug", func() { p.Call(t.Context(), "x") })
		h.ExpectOutstanding(t, 1) // the one the balancer holds
		towertest.CallThrough(t, readySettled(t, bal), h, "y", "ok")
	})
}

// A panic in the error handler told of an ejection goes up to the caller
// whose call made it, once the ejection is done: the endpoint is out and
// no longer offered, and the metric counts it.
func TestOutlierHandlerPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := fleet(5)
		fs[0].set(true)
		counts := &towermetrics.Counts{}
		bal := newBalancer("RoundRobin", fs, balance.WithOutlierDetection(isFailure, balance.ConsecutiveFailures(1)),
			balance.WithMetrics(counts), balance.WithErrorHandler(func(err error) { panic("handler's bug: " + err.Error()) }))
		defer bal.Close()
		p := readySettled(t, bal) // round robin: endpoint 0 first
		towertest.Panics(t, "handler's bug: load balancer ejected endpoint 0 for 30s: consecutive failures: boom", func() {
			p.Call(t.Context(), "x")
		})
		checkOut(t, bal, counts, 4, 1)
	})
}

// ejectedPanics is a sink that panics on Ejected +1, and ignores the rest.
type ejectedPanics struct{}

func (ejectedPanics) Add(k towermetrics.Kind, delta int64) {
	if k == towermetrics.Ejected && delta == 1 {
		panic("sink's bug")
	}
}
func (ejectedPanics) Observe(time.Duration, towermetrics.Outcome) {}

// A panic in the sink told of an ejection goes up to the caller whose call
// made it, once the ejection is done: the endpoint is out and no longer
// offered, the error handler still hears of it, and the balancer serves on
// with the others.
func TestOutlierSinkPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := fleet(5)
		fs[0].set(true)
		ej := newEjections()
		bal := newBalancer("RoundRobin", fs, balance.WithOutlierDetection(isFailure, balance.ConsecutiveFailures(1)),
			balance.WithMetrics(ejectedPanics{}), balance.WithErrorHandler(ej.add))
		defer bal.Close()
		p := readySettled(t, bal) // round robin: endpoint 0 first
		towertest.Panics(t, "sink's bug", func() { p.Call(t.Context(), "x") })
		synctest.Wait()
		if got := bal.ReadyLen(); got != 4 {
			t.Errorf("got ReadyLen() = %d, want 4", got)
		}
		ej.check(t, "0s: load balancer ejected endpoint 0 for 30s: consecutive failures: boom")
		callN(t, bal, 4)
		if n := fs[0].Calls(); n != 1 {
			t.Errorf("the ejected endpoint got %d calls, want 1", n)
		}
	})
}

// An ejection is logged at level Warn, with the endpoint's key, the
// reason and the duration.
func TestOutlierLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, logger := towertest.NewLogRecorder()
		fs := fleet(5)
		fs[2].set(true)
		bal := newBalancer("P2C", fs, balance.WithOutlierDetection(isFailure), balance.WithLogger(logger))
		defer bal.Close()
		callUntil(t, bal, func() bool { return len(rec.Lines()) == 1 })
		wantLog(t, rec, "WARN balance: ejected an outlier endpoint endpoint=2 reason=consecutive failures for=30s"+
			" detail=load balancer ejected endpoint 2 for 30s: consecutive failures: boom")
	})
}

// Ejection's message and reasons.
func TestEjectionError(t *testing.T) {
	for _, tt := range []struct {
		e    balance.Ejection[string]
		want string
	}{
		{balance.Ejection[string]{Key: "a", Reason: balance.ReasonConsecutiveFailures, Duration: 30e9},
			"load balancer ejected endpoint a for 30s: consecutive failures"},
		{balance.Ejection[string]{Key: "a", Reason: balance.ReasonConsecutiveFailures, Duration: 30e9, Err: errFail},
			"load balancer ejected endpoint a for 30s: consecutive failures: boom"},
		{balance.Ejection[string]{Key: "b", Reason: balance.ReasonSuccessRate, Duration: 60e9, SuccessRate: 0.25, Threshold: 0.8123456},
			"load balancer ejected endpoint b for 1m0s: success rate 0.25 below 0.8123"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
	e := &balance.Ejection[int]{Err: errFail}
	if e.Unwrap() != errFail {
		t.Error("Unwrap does not return Err")
	}
	if got := balance.EjectionReason(9).String(); got != "EjectionReason(9)" {
		t.Errorf("got %q, want EjectionReason(9)", got)
	}
	if got := balance.ReasonSuccessRate.String(); !strings.Contains(got, "success rate") {
		t.Errorf("got %q, want success rate", got)
	}
}

var _ error = (*balance.Ejection[int])(nil)
var _ tower.Service[string, string] = (*balance.P2C[int, string, string])(nil)

// An endpoint ejected while the balancer waits in its Ready, because it
// had no capacity, does not become ready when its Ready grants: the
// permit is given back, and it waits out its ejection.
func TestOutlierPendingEndpointEjected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x, hx := constMock(5, 0) // the less loaded: picked while ready
		y, _ := constMock(-1, 1)
		counts := &towermetrics.Counts{}
		bal := balance.NewP2C(list(x, y), balance.WithRand(newRand(1)),
			balance.WithOutlierDetection(isFailure), balance.WithMetrics(counts))
		defer bal.Close()
		var ps [5]permit
		for i := range ps {
			ps[i] = readySettled(t, bal)
		}
		checkOut(t, bal, counts, 1, 0) // x is pending, its allowance used up
		for _, p := range ps {
			call := towertest.GoCall(t.Context(), p, "x")
			hx.ExpectSettled(t, "x").Fail(errFail)
			call.ExpectError(t, errFail)
		}
		checkOut(t, bal, counts, 1, 1)
		hx.Allow(1)
		checkOut(t, bal, counts, 1, 1)
		hx.ExpectOutstanding(t, 0)
		time.Sleep(30 * time.Second)
		checkOut(t, bal, counts, 2, 0)
		hx.ExpectOutstanding(t, 1)
	})
}

// A panic in the error handler told of a success-rate ejection, on the
// timer's goroutine, is logged; the ejection stands.
func TestOutlierHandlerPanicsOnTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := towertest.CaptureLog(t)
		fs := fleet(5)
		fs[4].alternate = true
		counts := &towermetrics.Counts{}
		bal := newBalancer("RoundRobin", fs, balance.WithOutlierDetection(isFailure), balance.WithMetrics(counts),
			balance.WithErrorHandler(func(error) { panic("handler's bug") }))
		defer bal.Close()
		callN(t, bal, 500)
		time.Sleep(10 * time.Second)
		checkOut(t, bal, counts, 4, 1)
		if out := l.String(); !strings.Contains(out, "panic=\"handler's bug\"") || !strings.Contains(out, "timer goroutine") {
			t.Errorf("the default log lacks the handler's panic:\n%s", out)
		}
	})
}

// Shutdown waits for an evaluation under way, as long as its context
// lasts; Close waits for it to end. A balancer closed stops its timer: no
// evaluation runs after it.
func TestOutlierShutdownWaitsForEvaluation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := fleet(5)
		fs[4].alternate = true
		unblock := make(chan struct{})
		bal := newBalancer("RoundRobin", fs, balance.WithOutlierDetection(isFailure),
			balance.WithErrorHandler(func(error) { <-unblock }))
		callN(t, bal, 500)
		time.Sleep(10 * time.Second)
		synctest.Wait() // the evaluation is in the handler
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		shut := towertest.Go(func() (struct{}, error) {
			return struct{}{}, bal.(*balance.RoundRobin[int, string, string]).Shutdown(ctx)
		})
		time.Sleep(time.Second)
		synctest.Wait()
		shut.ExpectError(t, context.DeadlineExceeded)
		closed := towertest.Go(func() (struct{}, error) { return struct{}{}, bal.Close() })
		synctest.Wait()
		closed.ExpectPending(t)
		close(unblock)
		closed.ExpectValue(t, struct{}{})
	})
}
