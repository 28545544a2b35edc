package hedge_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower/metrics"
	"github.com/towergo/tower/towertest"
)

// wantTrace fails t unless rec recorded want.
func wantTrace(t *testing.T, rec *towertest.TraceRecorder, want ...string) {
	t.Helper()
	synctest.Wait()
	if got := rec.Lines(); !slices.Equal(got, want) {
		t.Errorf("got trace\n%q\nwant\n%q", got, want)
	}
}

// underAttempt fails t unless r was sent under the context of rec's
// attempt n, or, for n 0, of none.
func underAttempt(t *testing.T, r *towertest.Request[string, string], rec *towertest.TraceRecorder, n int) {
	t.Helper()
	a, ok := rec.Attempt(r.Context())
	if ok != (n != 0) || a.N != n {
		t.Errorf("request sent under the context of attempt %d (%v), want %d", a.N, ok, n)
	}
}

// A hedge sent at 10ms is an attempt, number 2, from 10ms to its end: it
// wins at 13ms, or loses with its context's error when the original
// answers first, at 12ms. The original is not reported.
func TestTraceHedge(t *testing.T) {
	for _, hedgeWins := range []bool{true, false} {
		name := "OriginalWins"
		if hedgeWins {
			name = "HedgeWins"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := towertest.NewTraceRecorder()
				svc, h, _ := newHedge()
				c := towertest.GoRequest(metrics.WithTracer(t.Context(), rec), svc, "orig")
				orig := h.ExpectSettled(t, "orig")
				underAttempt(t, orig, rec, 0)
				time.Sleep(10 * ms)
				hedged := h.ExpectSettled(t, "orig")
				underAttempt(t, hedged, rec, 2)
				if hedgeWins {
					time.Sleep(3 * ms)
					hedged.Respond("hedge-done")
					c.ExpectValue(t, "hedge-done")
					wantTrace(t, rec, "hedge 2 start 10ms delay=10ms", "hedge 2 end 13ms")
				} else {
					time.Sleep(2 * ms)
					orig.Respond("orig-done")
					c.ExpectValue(t, "orig-done")
					wantTrace(t, rec, "hedge 2 start 10ms delay=10ms", "hedge 2 end 12ms err=context canceled")
				}
				h.ExpectIdle(t, 2)
			})
		})
	}
}

// A hedge the policy does not let go is not an attempt; a call whose
// original answers before the delay reports nothing.
func TestTraceNoHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := towertest.NewTraceRecorder()
		ctx := metrics.WithTracer(t.Context(), rec)
		svc, h, _ := newHedge()
		c := towertest.GoRequest(ctx, svc, notRetryable)
		orig := h.ExpectSettled(t, notRetryable)
		time.Sleep(20 * ms)
		orig.Respond("done")
		c.ExpectValue(t, "done")

		c = towertest.GoRequest(ctx, svc, "fast")
		time.Sleep(5 * ms)
		h.ExpectSettled(t, "fast").Respond("done")
		c.ExpectValue(t, "done")
		wantTrace(t, rec)
		h.ExpectIdle(t, 2)
	})
}

// endingTracer is a TraceRecorder whose StartAttempt or EndAttempt runs
// end, after it has recorded.
type endingTracer struct {
	*towertest.TraceRecorder
	start, end ender // nil: returns
}

func (e endingTracer) StartAttempt(ctx context.Context, a metrics.Attempt) context.Context {
	ctx = e.TraceRecorder.StartAttempt(ctx, a)
	if e.start != nil {
		e.start()
	}
	return ctx
}

func (e endingTracer) EndAttempt(ctx context.Context, err error) {
	e.TraceRecorder.EndAttempt(ctx, err)
	if e.end != nil {
		e.end()
	}
}

// A panic in the Tracer's StartAttempt, or in what the hedge runs under
// the attempt's context, is the hedge leg's answer, as a panic of the
// leg's other user code is: it comes first here, at 10ms, and the caller
// gets it. The attempt the Tracer started hears of the panic.
func TestTracePanicInHedge(t *testing.T) {
	for _, tt := range []struct {
		name, where string
		start       ender
		callPanics  bool
		want        []string
	}{
		{name: "StartAttempt", where: "the request's metrics.Tracer", start: panics,
			want: []string{"hedge 2 start 10ms delay=10ms"}},
		{name: "Call", where: "the inner service's Call", callPanics: true,
			want: []string{"hedge 2 start 10ms delay=10ms", "hedge 2 end 10ms err=tower: panic in the inner service's Call" + leg + ": boom"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := towertest.NewTraceRecorder()
				ctx := metrics.WithTracer(t.Context(), endingTracer{TraceRecorder: rec, start: tt.start})
				svc, h, _ := newHedge()
				c := towertest.GoRequest(ctx, svc, "req")
				orig := h.ExpectSettled(t, "req")
				time.Sleep(10 * ms)
				calls := 1
				if tt.callPanics {
					h.ExpectSettled(t, "req").Panic(errBoom)
					calls++
				}
				_, err := c.Wait()
				c.ExpectElapsed(t, 10*ms)
				checkLegPanic(t, err, tt.where+leg, false)
				cancelled(t, orig, "the original")
				wantTrace(t, rec, tt.want...)
				h.ExpectIdle(t, calls)
			})
		})
	}
}

// A panic in the Tracer's EndAttempt, once the hedge has won: no caller is
// left to hear of it, and it is logged; the caller gets the hedge's
// answer.
func TestTracePanicInEndAttempt(t *testing.T) {
	log := towertest.CaptureLog(t)
	synctest.Test(t, func(t *testing.T) {
		rec := towertest.NewTraceRecorder()
		ctx := metrics.WithTracer(t.Context(), endingTracer{TraceRecorder: rec, end: panics})
		svc, h, _ := newHedge()
		c := towertest.GoRequest(ctx, svc, "req")
		h.ExpectSettled(t, "req")
		time.Sleep(10 * ms)
		h.ExpectSettled(t, "req").Respond("hedge-done")
		c.ExpectValue(t, "hedge-done")
		wantTrace(t, rec, "hedge 2 start 10ms delay=10ms", "hedge 2 end 10ms")
		h.ExpectIdle(t, 2)
	})
	for _, want := range []string{`where="the request's metrics.Tracer` + leg + `"`, "panic=boom"} {
		if out := log.String(); !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
}

// A panic in the Tracer's EndAttempt as it hears of the panic that ended
// the hedge leg: the caller gets the leg's panic, and the Tracer's, which
// no caller is left to hear of, is logged.
func TestTracePanicInEndAttemptAfterLegPanic(t *testing.T) {
	log := towertest.CaptureLog(t)
	synctest.Test(t, func(t *testing.T) {
		rec := towertest.NewTraceRecorder()
		ctx := metrics.WithTracer(t.Context(), endingTracer{TraceRecorder: rec, end: panics})
		svc, h, _ := newHedge()
		c := towertest.GoRequest(ctx, svc, "req")
		orig := h.ExpectSettled(t, "req")
		time.Sleep(10 * ms)
		h.ExpectSettled(t, "req").Panic(errBoom)
		_, err := c.Wait()
		c.ExpectElapsed(t, 10*ms)
		checkLegPanic(t, err, "the inner service's Call"+leg, false)
		cancelled(t, orig, "the original")
		wantTrace(t, rec, "hedge 2 start 10ms delay=10ms", "hedge 2 end 10ms err=tower: panic in the inner service's Call"+leg+": boom")
		h.ExpectIdle(t, 2)
	})
	for _, want := range []string{`where="the request's metrics.Tracer` + leg + `"`, "panic=boom"} {
		if out := log.String(); !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
}
