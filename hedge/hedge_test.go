package hedge_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/hedge"
	"github.com/towergo/tower/limit"
	"github.com/towergo/tower/towertest"
)

const ms = time.Millisecond

// tower: hedge_orig_completes_first. The hedge goes out at the p90 of the
// previous period, 10ms; the original answers first and wins, and the
// hedge is cancelled.
func TestHedgeOriginalCompletesFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h, p := newHedge()
		c := goCall(t.Context(), svc, "orig")
		orig := take(t, h, "orig")
		c.pending(t)
		noRequest(t, h)
		time.Sleep(10*ms - 1)
		noRequest(t, h)
		time.Sleep(1)
		hedged := take(t, h, "orig") // the hedge, at 10ms
		p.asked(t, 10*ms)
		c.pending(t)
		time.Sleep(2 * ms)
		orig.Respond("orig-done")
		c.expect(t, "orig-done", 12*ms)
		cancelled(t, hedged, "the hedge")
		checkCalls(t, h, 2)
	})
}

// tower: hedge_hedge_completes_first.
func TestHedgeHedgeCompletesFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h, _ := newHedge()
		c := goCall(t.Context(), svc, "orig")
		orig := take(t, h, "orig")
		noRequest(t, h)
		time.Sleep(10 * ms)
		hedged := take(t, h, "orig")
		c.pending(t)
		time.Sleep(3 * ms)
		hedged.Respond("hedge-done")
		c.expect(t, "hedge-done", 13*ms)
		cancelled(t, orig, "the original")
		checkCalls(t, h, 2)
	})
}

// tower: completes_before_hedge. tower runs it in real time; here, the
// original answers at 5ms and no hedge is ever sent.
func TestHedgeCompletesBeforeHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h, p := newHedge()
		c := goCall(t.Context(), svc, "orig")
		orig := take(t, h, "orig")
		time.Sleep(5 * ms)
		orig.Respond("orig-done")
		c.expect(t, "orig-done", 5*ms)
		time.Sleep(time.Second)
		noRequest(t, h)
		p.asked(t)
		checkCalls(t, h, 1)
	})
}

// tower: request_not_retyable. CanRetry is asked when the delay has
// passed, at 10ms, says no, and no hedge is sent.
func TestHedgeRequestNotRetryable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h, p := newHedge()
		c := goCall(t.Context(), svc, notRetryable)
		orig := take(t, h, notRetryable)
		time.Sleep(10 * ms)
		noRequest(t, h)
		p.asked(t, 10*ms)
		c.pending(t)
		time.Sleep(20 * ms)
		noRequest(t, h)
		orig.Respond("orig-done")
		c.expect(t, "orig-done", 30*ms)
		checkCalls(t, h, 1)
	})
}

// tower: request_not_clonable. No hedge, and CanRetry is never asked.
func TestHedgeRequestNotClonable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h, p := newHedge()
		c := goCall(t.Context(), svc, notClonable)
		orig := take(t, h, notClonable)
		time.Sleep(10 * ms)
		noRequest(t, h)
		c.pending(t)
		orig.Respond("orig-done")
		c.expect(t, "orig-done", 10*ms)
		p.asked(t)
		checkCalls(t, h, 1)
	})
}

// The first leg to answer wins even with an error: the original fails
// after the hedge went out, and its error is the call's.
func TestHedgeFirstErrorWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h, _ := newHedge()
		c := goCall(t.Context(), svc, "orig")
		orig := take(t, h, "orig")
		time.Sleep(10 * ms)
		hedged := take(t, h, "orig")
		time.Sleep(5 * ms)
		boom := errors.New("boom")
		orig.Fail(boom)
		c.expectErr(t, boom, 15*ms)
		cancelled(t, hedged, "the hedge")

		// And the hedge's error, the other way round.
		c = goCall(t.Context(), svc, "orig")
		orig = take(t, h, "orig")
		time.Sleep(10 * ms)
		take(t, h, "orig").Fail(boom)
		c.expectErr(t, boom, 10*ms)
		cancelled(t, orig, "the original")
		checkCalls(t, h, 4)
	})
}

// Until the previous period has recorded minDataPoints latencies, nothing
// is hedged; successes are recorded, rounded up to the millisecond, and
// errors are not.
func TestHedgeLearnsFromSuccesses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc := hedge.New[string, string](mock, hedge.Idempotent[string]{}, 2, 0.5, time.Second)
		answer := func(after time.Duration, fail bool) {
			c := goCall(t.Context(), svc, "req")
			r := take(t, h, "req")
			time.Sleep(after)
			if fail {
				r.Fail(errors.New("boom"))
			} else {
				r.Respond("ok")
			}
			c.Wait()
		}
		answer(3500*time.Microsecond, false) // recorded as 4ms
		answer(100*ms, true)                 // not recorded
		time.Sleep(time.Second - 103500*time.Microsecond)
		// The previous period holds one latency: not enough.
		answer(50*ms, false) // recorded in this period, as 50ms
		answer(2*ms, false)  // and 2ms
		checkCalls(t, h, 4)

		time.Sleep(time.Second - 52*ms) // the next period: its delay is the median, 2ms
		c := goCall(t.Context(), svc, "req")
		orig := take(t, h, "req")
		time.Sleep(2 * ms)
		take(t, h, "req").Respond("hedge")
		c.expect(t, "hedge", 2*ms)
		cancelled(t, orig, "the original")
	})
}

// The delay is fixed when the call starts: a rotation during the call does
// not change it, though later calls see the new period.
func TestHedgeDelayFixedAtCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc := hedge.New[string, string](mock, hedge.Idempotent[string]{}, 1, 0.5, 100*ms,
			hedge.WithMockLatencies(50, 50))
		time.Sleep(60 * ms)
		c := goCall(t.Context(), svc, "a") // at 60ms, delay 50ms
		orig := take(t, h, "a")
		time.Sleep(40 * ms) // 100ms: the read histogram is now the empty write one
		c2 := goCall(t.Context(), svc, "b")
		origB := take(t, h, "b")
		time.Sleep(10 * ms) // 110ms: a's hedge
		take(t, h, "a").Respond("hedge")
		c.expect(t, "hedge", 50*ms)
		cancelled(t, orig, "a's original")
		time.Sleep(time.Second)
		noRequest(t, h) // b was never hedged
		origB.Respond("b")
		c2.expect(t, "b", 1010*ms)
	})
}

// The hedge reserves nothing before its delay, and what each leg reserves
// is given back, whichever wins: over a ConcurrencyLimit of 2, both
// permits are free after each call.
func TestHedgeReleasesLoserReservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		cl := limit.NewConcurrency[string, string](mock, 2)
		svc := hedge.New[string, string](cl, hedge.Idempotent[string]{}, 1, 0.5, time.Minute, hedge.WithMockLatencies(10))
		sem := cl.Semaphore()
		for _, hedgeWins := range []bool{false, true} {
			c := goCall(t.Context(), svc, "req")
			orig := take(t, h, "req")
			if got := sem.Available(); got != 1 {
				t.Errorf("before the delay: %d permits free, want 1 (the hedge holds none)", got)
			}
			time.Sleep(10 * ms)
			hedged := take(t, h, "req")
			if got := sem.Available(); got != 0 {
				t.Errorf("with both legs out: %d permits free, want 0", got)
			}
			winner, loser := orig, hedged
			if hedgeWins {
				winner, loser = hedged, orig
			}
			winner.Respond("ok")
			c.Wait()
			cancelled(t, loser, "the loser")
			if got := sem.Available(); got != 2 {
				t.Errorf("after the call: %d permits free, want 2", got)
			}
		}
		checkCalls(t, h, 4)
	})
}

// A hedge that cannot get the inner service's capacity waits for it in
// Ready; when the original answers, the hedge gives up its wait and
// nothing is sent: a readiness the original's answer does not change.
func TestHedgeWaitingForReadinessGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		h.Allow(1)
		svc := hedge.New[string, string](mock, hedge.Idempotent[string]{}, 1, 0.5, time.Minute, hedge.WithMockLatencies(10))
		c := goCall(t.Context(), svc, "req")
		orig := take(t, h, "req")
		time.Sleep(15 * ms) // the hedge has waited in Ready since 10ms
		orig.Respond("ok")
		c.expect(t, "ok", 15*ms)
		h.Allow(1) // a wait the hedge had not given up would now send it
		noRequest(t, h)
		checkCalls(t, h, 1)
	})
}

// Over a ConcurrencyLimit, the permit the hedge waits for is the one the
// original frees as it answers. The hedge gives up its wait; if the permit
// reached it before the original's answer reached the race, the hedge has
// just been sent, and it is cancelled at once. Either way the caller has
// the original's answer at 15ms and every permit is free again.
func TestHedgeWaitingForPermitGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		cl := limit.NewConcurrency[string, string](mock, 1)
		svc := hedge.New[string, string](cl, hedge.Idempotent[string]{}, 1, 0.5, time.Minute, hedge.WithMockLatencies(10))
		c := goCall(t.Context(), svc, "req")
		orig := take(t, h, "req")
		time.Sleep(10 * ms)
		noRequest(t, h)
		if got := cl.Semaphore().Waiting(); got != 1 {
			t.Errorf("at 10ms: %d waiting for a permit, want 1 (the hedge)", got)
		}
		time.Sleep(5 * ms)
		orig.Respond("ok")
		c.expect(t, "ok", 15*ms)
		if w, a := cl.Semaphore().Waiting(), cl.Semaphore().Available(); w != 0 || a != 1 {
			t.Errorf("after the call: %d waiting, %d free; want 0, 1", w, a)
		}
		synctest.Wait()
		switch n := h.Calls(); n {
		case 1: // the hedge gave up its wait
		case 2: // the hedge was sent on the original's permit
			cancelled(t, h.ExpectNow(t, "req"), "the hedge")
		default:
			t.Errorf("inner service got %d calls, want 1, or 2 with the hedge cancelled", n)
		}
		noRequest(t, h)
		if got := h.Outstanding(); got != 0 {
			t.Errorf("inner service has %d reservations outstanding, want 0", got)
		}
	})
}

// gatedPolicy's CanRetry waits until gate is closed.
type gatedPolicy struct {
	hedge.Idempotent[string]
	gate chan struct{}
}

func (p gatedPolicy) CanRetry(string) bool { <-p.gate; return true }

// Ready grants free capacity even to a done context (the contract), so a
// hedge whose wait ends after the original answered must look at its
// context before it sends: here the original answers while CanRetry is
// still deciding, and the permit the hedge then gets at once is given
// back unused.
func TestHedgeOriginalAnswersBeforeHedgeIsReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		p := gatedPolicy{gate: make(chan struct{})}
		svc := hedge.New[string, string](mock, p, 1, 0.5, time.Minute, hedge.WithMockLatencies(10))
		c := goCall(t.Context(), svc, "req")
		orig := take(t, h, "req")
		time.Sleep(15 * ms) // CanRetry has been deciding since 10ms
		orig.Respond("ok")
		c.pending(t) // Call waits for the hedge leg to return
		close(p.gate)
		c.expect(t, "ok", 15*ms)
		checkCalls(t, h, 1)
	})
}

// A hedge leg whose Ready fails answers first, with that error, as in
// tower: the inner service is broken.
func TestHedgeReadyErrorWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h, _ := newHedge()
		c := goCall(t.Context(), svc, "orig")
		orig := take(t, h, "orig")
		broken := errors.New("broken")
		h.FailReady(broken)
		time.Sleep(10 * ms)
		c.expectErr(t, broken, 10*ms)
		cancelled(t, orig, "the original")
		checkCalls(t, h, 1)
	})
}

// The caller's ctx ends while both legs are out: both are cancelled, and
// the call returns ctx's error with nothing left behind.
func TestHedgeCallerCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h, _ := newHedge()
		ctx, cancel := context.WithCancel(t.Context())
		c := goCall(ctx, svc, "orig")
		orig := take(t, h, "orig")
		time.Sleep(10 * ms)
		hedged := take(t, h, "orig")
		time.Sleep(ms)
		cancel()
		c.expectErr(t, context.Canceled, 11*ms)
		cancelled(t, orig, "the original")
		cancelled(t, hedged, "the hedge")
		checkCalls(t, h, 2)
	})
}

// Hedge's Ready is the inner service's: a permit released unused gives it
// back, and its error is passed on unchanged.
func TestHedgeReadyPassesThrough(t *testing.T) {
	mock, h := towertest.NewMock[string, string]()
	svc := hedge.New[string, string](mock, hedge.Idempotent[string]{}, 1, 0.5, time.Minute)
	h.Allow(1)
	p, ok, err := tower.ReadyNow[string, string](svc)
	if !ok || err != nil {
		t.Fatalf("ReadyNow: got %v, %v; want ready", ok, err)
	}
	if _, ok, _ := tower.ReadyNow[string, string](svc); ok {
		t.Fatal("ReadyNow with the inner service's only permit taken: got ready, want not ready")
	}
	p.Release()
	if n := h.Outstanding(); n != 0 {
		t.Errorf("inner service has %d reservations outstanding, want 0", n)
	}
	broken := errors.New("broken")
	h.FailReady(broken)
	if _, err := svc.Ready(t.Context()); err != broken {
		t.Errorf("Ready: got %v, want %v", err, broken)
	}
}

func TestHedgeBadInputPanics(t *testing.T) {
	mock, _ := towertest.NewMock[string, string]()
	pol := hedge.Idempotent[string]{}
	for _, tt := range []struct {
		name string
		f    func()
		want string
	}{
		{"NilInner", func() { hedge.New[string, string](nil, pol, 1, 0.9, time.Second) }, "hedge.New: nil inner service"},
		{"NilPolicy", func() { hedge.New[string, string](mock, nil, 1, 0.9, time.Second) }, "hedge.New: nil policy"},
		{"PercentileNegative", func() { hedge.New[string, string](mock, pol, 1, -0.1, time.Second) }, "hedge.New: percentile must be between 0 and 1, got -0.1"},
		{"PercentileOver1", func() { hedge.New[string, string](mock, pol, 1, 90, time.Second) }, "hedge.New: percentile must be between 0 and 1, got 90"},
		{"PercentileNaN", func() { hedge.New[string, string](mock, pol, 1, math.NaN(), time.Second) }, "hedge.New: percentile must be between 0 and 1, got NaN"},
		{"MinDataPointsNegative", func() { hedge.New[string, string](mock, pol, -1, 0.9, time.Second) }, "hedge.New: minDataPoints must not be negative, got -1"},
		{"PeriodZero", func() { hedge.New[string, string](mock, pol, 1, 0.9, 0) }, "hedge.New: period must be positive, got 0s"},
		{"NilOption", func() { hedge.New[string, string](mock, pol, 1, 0.9, time.Second, nil) }, "hedge.New: option 0 is nil"},
		{"LayerNilPolicy", func() { hedge.NewLayer[string, string](nil, 1, 0.9, time.Second) }, "hedge.NewLayer: nil policy"},
		{"LayerPercentile", func() { hedge.NewLayer[string, string](pol, 1, 1.5, time.Second) }, "hedge.NewLayer: percentile must be between 0 and 1, got 1.5"},
		{"LayerPeriod", func() { hedge.NewLayer[string, string](pol, 1, 0.9, -time.Second) }, "hedge.NewLayer: period must be positive, got -1s"},
	} {
		t.Run(tt.name, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
	// The edges are valid.
	hedge.New[string, string](mock, pol, 0, 0, time.Nanosecond)
	hedge.New[string, string](mock, pol, 0, 1, time.Nanosecond)
}
