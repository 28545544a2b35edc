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
		c := towertest.GoRequest(t.Context(), svc, "orig")
		orig := h.ExpectSettled(t, "orig")
		c.ExpectPending(t)
		h.ExpectNoneSettled(t)
		time.Sleep(10*ms - 1)
		h.ExpectNoneSettled(t)
		time.Sleep(time.Nanosecond)
		hedged := h.ExpectSettled(t, "orig") // the hedge, at 10ms
		p.asked(t, 10*ms)
		c.ExpectPending(t)
		time.Sleep(2 * ms)
		orig.Respond("orig-done")
		c.ExpectValue(t, "orig-done")
		c.ExpectElapsed(t, 12*ms)
		cancelled(t, hedged, "the hedge")
		h.ExpectIdle(t, 2)
	})
}

// tower: hedge_hedge_completes_first.
func TestHedgeHedgeCompletesFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h, _ := newHedge()
		c := towertest.GoRequest(t.Context(), svc, "orig")
		orig := h.ExpectSettled(t, "orig")
		h.ExpectNoneSettled(t)
		time.Sleep(10 * ms)
		hedged := h.ExpectSettled(t, "orig")
		c.ExpectPending(t)
		time.Sleep(3 * ms)
		hedged.Respond("hedge-done")
		c.ExpectValue(t, "hedge-done")
		c.ExpectElapsed(t, 13*ms)
		cancelled(t, orig, "the original")
		h.ExpectIdle(t, 2)
	})
}

// tower: completes_before_hedge. tower runs it in real time; here, the
// original answers at 5ms and no hedge is ever sent.
func TestHedgeCompletesBeforeHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h, p := newHedge()
		c := towertest.GoRequest(t.Context(), svc, "orig")
		orig := h.ExpectSettled(t, "orig")
		time.Sleep(5 * ms)
		orig.Respond("orig-done")
		c.ExpectValue(t, "orig-done")
		c.ExpectElapsed(t, 5*ms)
		time.Sleep(time.Second)
		h.ExpectNoneSettled(t)
		p.asked(t)
		h.ExpectIdle(t, 1)
	})
}

// tower: request_not_retyable. CanRetry is asked when the delay has
// passed, at 10ms, says no, and no hedge is sent.
func TestHedgeRequestNotRetryable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h, p := newHedge()
		c := towertest.GoRequest(t.Context(), svc, notRetryable)
		orig := h.ExpectSettled(t, notRetryable)
		time.Sleep(10 * ms)
		h.ExpectNoneSettled(t)
		p.asked(t, 10*ms)
		c.ExpectPending(t)
		time.Sleep(20 * ms)
		h.ExpectNoneSettled(t)
		orig.Respond("orig-done")
		c.ExpectValue(t, "orig-done")
		c.ExpectElapsed(t, 30*ms)
		h.ExpectIdle(t, 1)
	})
}

// tower: request_not_clonable. No hedge, and CanRetry is never asked.
func TestHedgeRequestNotClonable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h, p := newHedge()
		c := towertest.GoRequest(t.Context(), svc, notClonable)
		orig := h.ExpectSettled(t, notClonable)
		time.Sleep(10 * ms)
		h.ExpectNoneSettled(t)
		c.ExpectPending(t)
		orig.Respond("orig-done")
		c.ExpectValue(t, "orig-done")
		c.ExpectElapsed(t, 10*ms)
		p.asked(t)
		h.ExpectIdle(t, 1)
	})
}

// The first leg to answer wins even with an error: the original fails
// after the hedge went out, and its error is the call's.
func TestHedgeFirstErrorWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h, _ := newHedge()
		c := towertest.GoRequest(t.Context(), svc, "orig")
		orig := h.ExpectSettled(t, "orig")
		time.Sleep(10 * ms)
		hedged := h.ExpectSettled(t, "orig")
		time.Sleep(5 * ms)
		boom := errors.New("boom")
		orig.Fail(boom)
		c.ExpectError(t, boom)
		c.ExpectElapsed(t, 15*ms)
		cancelled(t, hedged, "the hedge")

		// And the hedge's error, the other way round.
		c = towertest.GoRequest(t.Context(), svc, "orig")
		orig = h.ExpectSettled(t, "orig")
		time.Sleep(10 * ms)
		h.ExpectSettled(t, "orig").Fail(boom)
		c.ExpectError(t, boom)
		c.ExpectElapsed(t, 10*ms)
		cancelled(t, orig, "the original")
		h.ExpectIdle(t, 4)
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
			c := towertest.GoRequest(t.Context(), svc, "req")
			r := h.ExpectSettled(t, "req")
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
		h.ExpectIdle(t, 4)

		time.Sleep(time.Second - 52*ms) // the next period: its delay is the median, 2ms
		c := towertest.GoRequest(t.Context(), svc, "req")
		orig := h.ExpectSettled(t, "req")
		time.Sleep(2 * ms)
		h.ExpectSettled(t, "req").Respond("hedge")
		c.ExpectValue(t, "hedge")
		c.ExpectElapsed(t, 2*ms)
		cancelled(t, orig, "the original")
	})
}

// The delay is fixed when the call starts: a rotation during the call does
// not change it, though later calls see the new period.
func TestHedgeDelayFixedAtCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		svc := hedge.MockLatencies(hedge.New[string, string](mock, hedge.Idempotent[string]{}, 1, 0.5, 100*ms), 50, 50)
		time.Sleep(60 * ms)
		c := towertest.GoRequest(t.Context(), svc, "a") // at 60ms, delay 50ms
		orig := h.ExpectSettled(t, "a")
		time.Sleep(40 * ms) // 100ms: the read histogram is now the empty write one
		c2 := towertest.GoRequest(t.Context(), svc, "b")
		origB := h.ExpectSettled(t, "b")
		time.Sleep(10 * ms) // 110ms: a's hedge
		h.ExpectSettled(t, "a").Respond("hedge")
		c.ExpectValue(t, "hedge")
		c.ExpectElapsed(t, 50*ms)
		cancelled(t, orig, "a's original")
		time.Sleep(time.Second)
		h.ExpectNoneSettled(t) // b was never hedged
		origB.Respond("b")
		c2.ExpectValue(t, "b")
		c2.ExpectElapsed(t, 1010*ms)
	})
}

// The hedge reserves nothing before its delay, and what each leg reserves
// is given back, whichever wins: over a ConcurrencyLimit of 2, both
// permits are free after each call.
func TestHedgeReleasesLoserReservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		cl := limit.NewConcurrency[string, string](mock, 2)
		svc := hedge.MockLatencies(hedge.New[string, string](cl, hedge.Idempotent[string]{}, 1, 0.5, time.Minute), 10)
		sem := cl.Semaphore()
		for _, hedgeWins := range []bool{false, true} {
			c := towertest.GoRequest(t.Context(), svc, "req")
			orig := h.ExpectSettled(t, "req")
			if got := sem.Available(); got != 1 {
				t.Errorf("before the delay: %d permits free, want 1 (the hedge holds none)", got)
			}
			time.Sleep(10 * ms)
			hedged := h.ExpectSettled(t, "req")
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
		h.ExpectIdle(t, 4)
	})
}

// A hedge that cannot get the inner service's capacity waits for it in
// Ready; when the original answers, the hedge gives up its wait and
// nothing is sent: a readiness the original's answer does not change.
func TestHedgeWaitingForReadinessGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock, h := towertest.NewMock[string, string]()
		h.Allow(1)
		svc := hedge.MockLatencies(hedge.New[string, string](mock, hedge.Idempotent[string]{}, 1, 0.5, time.Minute), 10)
		c := towertest.GoRequest(t.Context(), svc, "req")
		orig := h.ExpectSettled(t, "req")
		time.Sleep(15 * ms) // the hedge has waited in Ready since 10ms
		orig.Respond("ok")
		c.ExpectValue(t, "ok") // a wait the hedge had not given up would now send it
		c.ExpectElapsed(t, 15*ms)
		h.Allow(1)
		h.ExpectNoneSettled(t)
		h.ExpectIdle(t, 1)
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
		svc := hedge.MockLatencies(hedge.New[string, string](cl, hedge.Idempotent[string]{}, 1, 0.5, time.Minute), 10)
		c := towertest.GoRequest(t.Context(), svc, "req")
		orig := h.ExpectSettled(t, "req")
		time.Sleep(10 * ms)
		h.ExpectNoneSettled(t)
		if got := cl.Semaphore().Waiting(); got != 1 {
			t.Errorf("at 10ms: %d waiting for a permit, want 1 (the hedge)", got)
		}
		time.Sleep(5 * ms)
		orig.Respond("ok")
		c.ExpectValue(t, "ok")
		c.ExpectElapsed(t, 15*ms)
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
		h.ExpectNoneSettled(t)
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
		svc := hedge.MockLatencies(hedge.New[string, string](mock, p, 1, 0.5, time.Minute), 10)
		c := towertest.GoRequest(t.Context(), svc, "req")
		orig := h.ExpectSettled(t, "req")
		time.Sleep(15 * ms) // CanRetry has been deciding since 10ms
		orig.Respond("ok")
		c.ExpectPending(t) // Call waits for the hedge leg to return
		close(p.gate)
		c.ExpectValue(t, "ok")
		c.ExpectElapsed(t, 15*ms)
		h.ExpectIdle(t, 1)
	})
}

// A hedge leg whose Ready fails answers first, with that error, as in
// tower: the inner service is broken.
func TestHedgeReadyErrorWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h, _ := newHedge()
		c := towertest.GoRequest(t.Context(), svc, "orig")
		orig := h.ExpectSettled(t, "orig")
		broken := errors.New("broken")
		h.FailReady(broken)
		time.Sleep(10 * ms)
		c.ExpectError(t, broken)
		c.ExpectElapsed(t, 10*ms)
		cancelled(t, orig, "the original")
		h.ExpectIdle(t, 1)
	})
}

// The caller's ctx ends while both legs are out: both are cancelled, and
// the call returns ctx's error with nothing left behind.
func TestHedgeCallerCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, h, _ := newHedge()
		ctx, cancel := context.WithCancel(t.Context())
		c := towertest.GoRequest(ctx, svc, "orig")
		orig := h.ExpectSettled(t, "orig")
		time.Sleep(10 * ms)
		hedged := h.ExpectSettled(t, "orig")
		time.Sleep(ms)
		cancel()
		c.ExpectError(t, context.Canceled)
		c.ExpectElapsed(t, 11*ms)
		cancelled(t, orig, "the original")
		cancelled(t, hedged, "the hedge")
		h.ExpectIdle(t, 2)
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

// While hedging, a leg's latency is recorded only if it wins with a
// response: the original's, when it answers before the hedge is sent, and
// the hedge's, when it answers first. A leg that wins with an error is not
// recorded. The next period's delay is the median of what was recorded.
func TestHedgeRecordsWinningSuccessesOnly(t *testing.T) {
	boom := errors.New("boom")
	// A leg answers one call, whose hedge is due at 10ms, after d, with an
	// error if fail: the original if d < 10ms, and otherwise the hedge,
	// d - 10ms after it was sent.
	type leg struct {
		d    time.Duration
		fail bool
	}
	for _, tt := range []struct {
		name string
		legs []leg
	}{
		{"original", []leg{{4 * ms, false}, {6 * ms, true}, {4 * ms, false}}},
		{"hedge", []leg{{14 * ms, false}, {17 * ms, true}, {14 * ms, false}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock, h := towertest.NewMock[string, string]()
				svc := hedge.MockLatencies(hedge.New[string, string](mock, hedge.Idempotent[string]{}, 2, 0.5, time.Second), 10, 10)
				start := time.Now()
				for _, leg := range tt.legs {
					c := towertest.GoRequest(t.Context(), svc, "req")
					orig := h.ExpectSettled(t, "req")
					answer := orig
					if leg.d >= 10*ms {
						time.Sleep(10 * ms)
						answer = h.ExpectSettled(t, "req")
						time.Sleep(leg.d - 10*ms)
					} else {
						time.Sleep(leg.d)
					}
					if leg.fail {
						answer.Fail(boom)
					} else {
						answer.Respond("ok")
					}
					c.Wait()
				}
				// The next period: two latencies of 4ms recorded, for the
				// original (a success at 4ms each time) or the hedge (4ms
				// after it was sent), and none for the failures.
				time.Sleep(time.Second - time.Since(start))
				c := towertest.GoRequest(t.Context(), svc, "req")
				orig := h.ExpectSettled(t, "req")
				time.Sleep(4 * ms)
				h.ExpectSettled(t, "req").Respond("hedge")
				c.ExpectValue(t, "hedge")
				c.ExpectElapsed(t, 4*ms)
				cancelled(t, orig, "the original")
			})
		})
	}
}
